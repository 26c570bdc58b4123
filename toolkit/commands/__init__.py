"""One function per user action, shared by the CLI and the MCP server.

Each takes the `Config` and plain arguments (plus, where the action reports as it goes,
a listener object), builds the clients it needs, holds the run lock where it writes, and
returns a typed result that carries everything a caller shows. None of them prints,
imports click or exits: failures are `toolkit.errors.ToolkitError`s.

    new.new_post           write a new draft post                      -> NewPost
    check.check            validate posts offline                      -> CheckResult
    build.build            build the static site                       -> BuildReport
    publish.plan           what publish would do                       -> PublishResult
    publish.publish        sync posts to the publishing API            -> PublishResult
    pull.pull              import remote articles as posts             -> PullResult
    mirror.mirror          mirror comments and the reading list        -> MirrorResult
    watch.watch            a live-preview session, to start and stop   -> WatchSession
    serve.serve            the built site on a local server, to stop   -> RunningSite
    sandbox.sandbox        a started local emulator, to stop           -> RunningSandbox
    demo.demo              the whole pipeline against the sandbox      -> DemoReport
    config.config_keys     every configuration key and its value       -> list[ConfigKey]

Import them from their modules (`from toolkit.commands.publish import publish`): this
package imports nothing, so a command pays only for what it uses.
"""
