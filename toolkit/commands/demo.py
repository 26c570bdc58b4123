"""The whole pipeline, offline: sandbox, pull, publish, mirror, build, export.

The demo works on a copy of the project in `.toolkit/demo/`, so it never touches the
real `toolkit.lock` (which belongs to the real service) or `content/_mirror/`. The sandbox
runs in-process on a free loopback port and stops at the end.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from toolkit.commands.build import build
from toolkit.commands.export import ExportResult, export
from toolkit.commands.mirror import mirror
from toolkit.commands.publish import publish
from toolkit.commands.pull import pull
from toolkit.config import Config, Secret
from toolkit.mirror import MirrorResult
from toolkit.site import BuildReport
from toolkit.sync.engine import PublishProgress, PublishResult
from toolkit.sync.pull import PullResult


@dataclass
class DemoReport:
    workdir: Path
    sandbox_url: str = ""
    steps: list[str] = field(default_factory=list)  # what was done, in order
    pulled: PullResult | None = None
    published: PublishResult | None = None
    mirrored: MirrorResult | None = None
    built: BuildReport | None = None
    exported: ExportResult | None = None

    @property
    def site_index(self) -> Path:
        return self.workdir / "site" / "index.html"

    @property
    def ok(self) -> bool:
        return bool(self.published and self.published.ok and self.built and self.built.ok)


def demo_config(config: Config, workdir: Path, base_url: str, api_key: str, window: float) -> Config:
    """The project's configuration, moved into `workdir` and pointed at the sandbox."""
    return dataclasses.replace(
        config,
        root=workdir,
        path=workdir / config.path.name,
        site=dataclasses.replace(
            config.site,
            content_dir=workdir / "content",
            output_dir=workdir / "site",
        ),
        forem=dataclasses.replace(
            config.forem, base_url=base_url, api_key=Secret(api_key), rate_window=window,
            organization_id=None,
        ),
    )


def prepare_workdir(config: Config) -> Path:
    """A fresh copy of the posts (without any mirror) in `.toolkit/demo/`."""
    workdir = config.state_dir / "demo"
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(config.site.content_dir, workdir / "content",
                    ignore=shutil.ignore_patterns("_mirror", ".*"))
    return workdir


def demo(
    config: Config,
    *,
    progress: PublishProgress | None = None,
    on_step: Callable[[str], None] | None = None,
) -> DemoReport:
    """Sandbox, pull, publish, mirror, build and export, in `.toolkit/demo/`;
    `on_step(message)` is told as each step starts (the messages are in
    `DemoReport.steps` too)."""
    from toolkit.sandbox.archive.seed import DEMO_API_KEY
    from toolkit.sandbox.server import SandboxServer

    workdir = prepare_workdir(config)
    report = DemoReport(workdir=workdir)

    def step(message: str) -> None:
        report.steps.append(message)
        if on_step is not None:
            on_step(message)

    with SandboxServer(db_path=None) as sandbox:
        report.sandbox_url = sandbox.base_url
        step(f"sandbox running at {sandbox.base_url} (seeded demo account, in memory)")
        local = demo_config(config, workdir, sandbox.base_url, sandbox.demo_api_key,
                            sandbox.rate_window)
        step("pull: importing the demo account's articles as posts")
        report.pulled = pull(local)
        step("publish: sending the posts of content/ to the sandbox")
        report.published = publish(local, progress=progress)
        step("mirror: comments and the reading list into content/_mirror/")
        report.mirrored = mirror(local)
        step("build: the static site")
        report.built = build(local, clean=True)
        step("export: the site into one zip archive, through the sandbox's archive tasks")
        report.exported = export(dataclasses.replace(local, archive=dataclasses.replace(
            local.archive, base_url=sandbox.base_url, api_key=Secret(DEMO_API_KEY),
            output=workdir / "site.zip", source="site", format="zip")))
    return report
