"""One function per user action, shared by the CLI and the MCP server.

Each takes the `Config` and plain arguments (plus, where the action reports as it goes,
a listener object), builds the clients it needs, holds the run lock where it writes, and
returns a typed result that carries everything a caller shows. None of them prints,
imports click or exits: failures are `toolkit.errors.ToolkitError`s.

    new.new_post           write a new draft post                      -> NewPost
    check.check            validate posts offline                      -> CheckResult
    build.build            build the static site                       -> BuildReport
    build.build_premium    the premium site, behind the licence gate   -> PremiumBuildReport
    publish.plan           what publish would do                       -> PublishResult
    publish.publish        sync posts to the publishing API            -> PublishResult
    pull.pull              import remote articles as posts             -> PullResult
    mirror.mirror          mirror comments and the reading list        -> MirrorResult
    watch.watch            a live-preview session, to start and stop   -> WatchSession
    license.license_status         the licence, and premium's verdict  -> LicenseStatus
    license.license_notifications  licence events since the last call  -> NotificationsResult
    export.export          the site or the posts as one verified archive -> ExportResult
    serve.serve            the built site on a local server, to stop   -> RunningSite
    sandbox.sandbox        a started local emulator, to stop           -> RunningSandbox
    demo.demo              the whole pipeline against the sandbox      -> DemoReport
    config.config_keys     every configuration key and its value       -> list[ConfigKey]
    logs.query             SQL over the run log, remote or local       -> LogQuery
    posts.list_posts       every post with its sync state (offline)    -> PostList
    posts.read_post        one post                                    -> PostDocument
    posts.post_comments    a post's mirrored comments                  -> PostComments

Each of them (but `sandbox`, which needs no run of its own) is a recorded run: its events
go to the project's run log and, with `[logs] base_url` set, to the log service
(`toolkit.runlog.run.recorded`); `records.py` writes what a result adds to them.

A result that is printed or handed over as JSON has one document, the same for the CLI's
`--json` and the MCP server's tools: `results.to_json(result)`, which reads the result's
own dataclass (`ExportResult`, `LicenseStatus`, `ConfigKey`, `LogQuery`, ...) through
pydantic, or writes a `Document` of `results/` where the document counts or reshapes
(plan and publish, check, build, the posts).

The MCP server's start-up and its clients are `toolkit.mcp.service`: the server calls
these functions, so none of them imports it (the layers: `[tool.importlinter]`).

Import them from their modules (`from toolkit.commands.publish import publish`): this
package imports nothing, so a command pays only for what it uses.
"""
