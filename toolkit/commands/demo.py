"""The whole pipeline, offline: sandbox, pull, publish, mirror, premium builds, build,
export, and a question to the run log.

The demo works on its own project (`toolkit.scaffold.demo`: a copy of the posts in
`.toolkit/demo/`, its configuration pointed at the sandbox). The sandbox runs in-process
on a free loopback port and stops at the end, so the demo's copy of the mirror loses the
sandbox's URLs before the site is built (`unlink_origin`). Each step is a recorded run
whose events are shipped to the sandbox's log service; the last step asks it, in SQL, how
the requests went (`demo_query`).

The demo's sandbox runs with a short rate-limit window (`DEMO_RATE_WINDOW`, the same
limits per window as the real service's 30 s), and its client schedules by the same
window: the demo still shows a rate-limit pause, seconds long instead of half a minute.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.commands.build import PremiumBuildReport, build, build_premium
from toolkit.commands.export import ExportResult, export
from toolkit.commands.logs import LogQuery, query
from toolkit.commands.mirror import mirror
from toolkit.commands.publish import publish
from toolkit.commands.pull import pull
from toolkit.commands.sandbox import require_sandbox
from toolkit.config import Config, Secret
from toolkit.errors import PremiumRefused
from toolkit.mirror import MirrorResult
from toolkit.mirror.offline import unlink_origin
from toolkit.runlog.run import recorded
from toolkit.scaffold.demo import demo_config, demo_query, licensed_config, prepare_workdir
from toolkit.site import BuildReport
from toolkit.sync.engine import PublishProgress, PublishResult
from toolkit.sync.pull import PullResult

# The rate-limit window of the demo's sandbox and client, in seconds (the real one: 30).
DEMO_RATE_WINDOW = 3.0


@dataclass
class DemoReport:
    workdir: Path
    sandbox_url: str = ""
    steps: list[str] = field(default_factory=list)  # what was done, in order
    pulled: PullResult | None = None
    published: PublishResult | None = None
    mirrored: MirrorResult | None = None
    built: BuildReport | None = None
    premium: PremiumBuildReport | None = None  # the build the licensing service allowed
    premium_refused: PremiumRefused | None = None  # the one it refused (nothing written)
    logs: LogQuery | None = None  # the run log's answer to DEMO_QUERY
    exported: ExportResult | None = None

    @property
    def site_index(self) -> Path:
        return self.workdir / "site" / "index.html"

    @property
    def ok(self) -> bool:
        return bool(
            self.published
            and self.published.ok
            and self.built
            and self.built.ok
            and self.premium
            and self.premium.site.ok
            and self.premium_refused
        )


def premium_builds(
    config: Config, base_url: str
) -> tuple[PremiumBuildReport, PremiumRefused | None]:
    """A premium build for the sandbox's licensed customer, then one for an unlicensed
    customer, which the gate refuses before anything is written."""
    from toolkit_sandbox.licensing import seed

    def licensed(customer_id: str) -> Config:
        token = seed.token_for(seed.DEMO_TOKEN_LABEL)
        return licensed_config(config, base_url, seed.APPLICATION_ID, customer_id, token)

    built = build_premium(licensed(seed.LICENSED_CUSTOMER), clean=True)
    try:
        build_premium(licensed(seed.UNLICENSED_CUSTOMER))
    except PremiumRefused as refused:
        return built, refused
    return built, None


def demo(
    config: Config,
    *,
    progress: PublishProgress | None = None,
    on_step: Callable[[str], None] | None = None,
    rate_window: float = DEMO_RATE_WINDOW,
) -> DemoReport:
    """Sandbox, pull, publish, mirror, premium builds, build, export and a run-log query,
    in `.toolkit/demo/`; `on_step(message)` is told as each step starts (the messages are
    in `DemoReport.steps` too). The sandbox and the client share `rate_window`."""
    require_sandbox()
    from toolkit_sandbox import forem, logs
    from toolkit_sandbox.archive.seed import DEMO_API_KEY
    from toolkit_sandbox.logs.http import PASSWORD, USERNAME
    from toolkit_sandbox.server import SandboxServer

    with recorded(config, "demo") as run:
        workdir = prepare_workdir(config)
        report = DemoReport(workdir=workdir)

        def step(message: str) -> None:
            report.steps.append(message)
            run.event("step", message=message)
            if on_step is not None:
                on_step(message)

        with SandboxServer(db_path=None, rate_window=rate_window) as sandbox:
            report.sandbox_url = sandbox.base_url
            step(f"sandbox running at {sandbox.base_url} (seeded demo account, in memory)")
            local = demo_config(
                config,
                workdir,
                sandbox.base_url,
                forem.api_key(sandbox),
                sandbox.rate_window,
                (USERNAME, PASSWORD),
            )
            has_logs = logs.available()
            if not has_logs:  # a plain install: no log service to ship to or ask
                local = dataclasses.replace(
                    local, logs=dataclasses.replace(local.logs, base_url=None)
                )
            step("pull: importing the demo account's articles as posts")
            report.pulled = pull(local)
            step("publish: sending the posts of content/ to the sandbox")
            report.published = publish(local, progress=progress)
            step("mirror: comments and the reading list into content/_mirror/")
            report.mirrored = mirror(local)
            unlink_origin(local.site.content_dir, sandbox.base_url)
            step("premium: a build for a licensed customer, then one for an unlicensed customer")
            report.premium, report.premium_refused = premium_builds(local, sandbox.base_url)
            step("build: the static site")
            report.built = build(local, clean=True)
            step("export: the site into one zip archive, through the sandbox's archive tasks")
            report.exported = export(
                dataclasses.replace(
                    local,
                    archive=dataclasses.replace(
                        local.archive,
                        base_url=sandbox.base_url,
                        api_key=Secret(DEMO_API_KEY),
                        output=workdir / "site.zip",
                        source="site",
                        format="zip",
                    ),
                )
            )
            if has_logs:
                step(
                    f"logs: each step shipped its run log to the stream {local.logs.stream!r}; "
                    "asking it how the requests went"
                )
                report.logs = query(local, demo_query(local.logs.stream))
            else:
                step(f"logs: skipped, the sandbox's {logs.MISSING}")
        if not report.ok:
            run.outcome = "failed"
    return report
