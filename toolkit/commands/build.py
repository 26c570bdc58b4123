"""`build`: the static site; `build_premium`: the premium site, behind the licence gate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from toolkit.commands import records
from toolkit.config import Config
from toolkit.errors import BuildError
from toolkit.runlog.run import recorded
from toolkit.site import BuildReport, SiteBuilder

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.license.gate import LicenseCheck, PremiumGate

BuildProgress = Callable[[int, int], None]  # (pages in all, pages done)


def build(
    config: Config,
    *,
    clean: bool = False,
    drafts: bool = False,
    out: str | Path | None = None,
    progress: BuildProgress | None = None,
    post_folders: tuple[str, ...] = (),
) -> BuildReport:
    """Build the site incrementally (`clean`: everything again) into `out` (default:
    `[site] output_dir`); `drafts` includes unpublished posts, marked as drafts.
    `post_folders`: the only real folders a post's symlink may lead into (default: the
    project's; an assistant's build gives the content folder alone)."""
    with recorded(config, "build") as run:
        report = SiteBuilder(config, drafts=drafts, out=out, post_folders=post_folders).build(
            clean=clean, progress=progress
        )
        records.build(run, report)
    return report


@dataclass
class PremiumBuildReport:
    """A premium build: the licence that allowed it, and the build itself."""

    license: LicenseCheck
    site: BuildReport


def premium_output_dir(config: Config, out: str | Path | None = None) -> Path:
    """Where a premium build writes: `out`, else `[site] premium_output_dir`; never the
    public site's folder, nor a folder inside it or around it, so that a public site can
    never carry a premium page."""
    target = Path(out).resolve() if out is not None else config.site.premium_output_dir
    public = config.site.output_dir
    if target == public or public in target.parents or target in public.parents:
        raise BuildError(
            f"{config.relative(target)}: a premium build never writes into, inside or around "
            f"the public site's folder ({config.relative(public)}); choose another folder "
            "([site] premium_output_dir or --out)"
        )
    return target


def build_premium(
    config: Config,
    *,
    clean: bool = False,
    drafts: bool = False,
    out: str | Path | None = None,
    progress: BuildProgress | None = None,
    gate: PremiumGate | None = None,
) -> PremiumBuildReport:
    """Build the premium site (premium posts and the `templates/premium/` overlay) into
    its own folder, once the licensing service says the licence is active.

    The service is asked before anything is written, once (`gate`, default: a new
    `PremiumGate`); a refusal or no answer raises `PremiumRefused` and leaves every file
    as it was.
    """
    from toolkit.license.gate import PremiumGate

    with recorded(config, "build") as run:
        target = premium_output_dir(config, out)
        check = (gate or PremiumGate(config, on_request=run.request)).check()
        run.event("license", action="allowed", requests=check.requests)
        site = SiteBuilder(config, drafts=drafts, out=target, premium=True).build(
            clean=clean, progress=progress
        )
        records.build(run, site)
    return PremiumBuildReport(license=check, site=site)
