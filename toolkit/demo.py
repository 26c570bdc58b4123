"""The whole pipeline, offline: sandbox, pull, publish, mirror, build.

The demo works on a copy of the project in `.toolkit/demo/`, so it never touches the
real `toolkit.lock` (which belongs to the real service) or `content/_mirror/`. The sandbox
runs in-process on a free loopback port and stops at the end.
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from toolkit.config import Config, Secret
from toolkit.mirror import MirrorResult, run_mirror
from toolkit.site import BuildReport, SiteBuilder
from toolkit.sync.engine import PublishResult, Reporter, SyncEngine
from toolkit.sync.pull import PullResult, pull


@dataclass
class DemoReport:
    workdir: Path
    sandbox_url: str = ""
    pulled: PullResult | None = None
    published: PublishResult | None = None
    mirrored: MirrorResult | None = None
    built: BuildReport | None = None

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


def run_demo(
    config: Config,
    *,
    reporter: Reporter | None = None,
    step: Callable[[str], None] = lambda message: None,
) -> DemoReport:
    from toolkit.clients.forem import ForemClient
    from toolkit.sandbox.server import SandboxServer

    workdir = prepare_workdir(config)
    report = DemoReport(workdir=workdir)
    with SandboxServer(db_path=None) as sandbox:
        report.sandbox_url = sandbox.base_url
        step(f"sandbox running at {sandbox.base_url} (seeded demo account, in memory)")
        demo = demo_config(config, workdir, sandbox.base_url, sandbox.demo_api_key,
                           sandbox.rate_window)
        with ForemClient(demo.forem.base_url, demo.forem.api_key,
                         rate_window=demo.forem.rate_window) as client:
            step("pull: importing the demo account's articles as posts")
            report.pulled = pull(demo, client)
            step("publish: sending the posts of content/ to the sandbox")
            report.published = SyncEngine(demo, client, reporter=reporter).publish()
            step("mirror: comments and the reading list into content/_mirror/")
            report.mirrored = run_mirror(demo, client)
        step("build: the static site")
        report.built = SiteBuilder(demo).build(clean=True)
    return report
