"""The demo's project (`toolkit demo`): a copy of the posts in `.toolkit/demo/`, so the
demo never touches the real `toolkit.lock` (which belongs to the real service) or
`content/_mirror/`, and its configuration pointed at the services that stand in for the
real ones (the sandbox's), given as plain values: the sandbox is the command's to start.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path

from toolkit.config import Config, Secret
from toolkit.localfiles import config_folders, within
from toolkit.mirror_layout import MIRROR
from toolkit.runlog.shipping import quoted

__all__ = ["demo_config", "demo_query", "licensed_config", "prepare_workdir"]


def prepare_workdir(config: Config) -> Path:
    """A fresh copy of the posts (without any mirror) in `.toolkit/demo/`. A symlink that
    leads out of the project is left out, as the project's own walk leaves it: the copy
    would otherwise hold what it leads to as a plain file of the demo's."""
    workdir = config.state_dir / "demo"
    if workdir.exists():
        shutil.rmtree(workdir)
    folders = config_folders(config)
    hidden = shutil.ignore_patterns(MIRROR, ".*")

    def ignored(folder: str, names: list[str]) -> set[str]:
        left_out = set(hidden(folder, names))
        for name in names:
            path = os.path.join(folder, name)
            if os.path.islink(path) and not within(os.path.realpath(path), folders):
                left_out.add(name)
        return left_out

    shutil.copytree(config.site.content_dir, workdir / "content", ignore=ignored)
    return workdir


def demo_config(
    config: Config,
    workdir: Path,
    base_url: str,
    api_key: str,
    window: float,
    logs: tuple[str, str] = ("", ""),
) -> Config:
    """The project's configuration, moved into `workdir` and pointed at `base_url` (its
    publishing API with `api_key` and rate-limit `window`, and its log service with
    `logs`' user and password)."""
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
            config.forem,
            base_url=base_url,
            api_key=Secret(api_key),
            rate_window=window,
            organization_id=None,
        ),
        logs=dataclasses.replace(
            config.logs,
            base_url=base_url,
            username=Secret(logs[0]),
            password=Secret(logs[1]),
        ),
    )


def licensed_config(
    config: Config, base_url: str, application_id: str, customer_id: str, token: str
) -> Config:
    """`config` asking the licensing service at `base_url` about `customer_id` of
    `application_id`, with `token`; premium builds go to `site-premium/` beside `site/`."""
    return dataclasses.replace(
        config,
        site=dataclasses.replace(config.site, premium_output_dir=config.root / "site-premium"),
        license=dataclasses.replace(
            config.license,
            base_url=base_url,
            application_id=application_id,
            customer_id=customer_id,
            user_id=None,
            token=Secret(token),
        ),
    )


def demo_query(stream: str) -> str:
    """The demo's question to the run log of `stream`: requests by status, each with its
    slowest route."""
    return (
        f"SELECT status, COUNT(*) AS requests, MAX(duration_ms) AS slowest_ms, "
        f"FIRST_VALUE(route ORDER BY duration_ms DESC) AS slowest_route "
        f"FROM {quoted(stream)} WHERE event = 'request' GROUP BY status ORDER BY status"
    )
