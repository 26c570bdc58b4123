"""Whether toolkit builds the site: `[site] enabled`, else yes for dev.to-style posts and no
when `[source]` names another generator, whose own site it is."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.config import Config


def site_enabled(config: Config) -> bool:
    if config.site.enabled is not None:
        return config.site.enabled
    return config.source.generator == "devto"


def left_to_generator(config: Config) -> str:
    """The one line `build`, `serve` and `watch` say when the site is not toolkit's."""
    generator = config.source.generator
    owner = f"{generator}'s" if generator != "devto" else "another tool's"
    return (
        f"the site is {owner} ([site] enabled = false): toolkit builds nothing; "
        "set [site] enabled = true in toolkit.toml to build it with toolkit"
    )
