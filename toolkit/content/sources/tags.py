"""Tags as dev.to takes them: lowercase letters and digits, at most four.

A writer's site shows tags as people read them (`GitHub Copilot`, `Node.js`,
`machine-learning`); the writer's old tools normalised them before sending. toolkit does
the same: `[forem.tags]` maps a name as written to the tag sent (`"GitHub Copilot" =
"githubcopilot"`); otherwise the tag is lower-cased and what is not a letter or digit is
dropped (`Node.js` -> `nodejs`, `c#` -> `c`). A tag left empty cannot be mapped; past four,
the first four are kept. Each post says once what changed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field

MAX_TAGS = 4
MAX_TAG_LENGTH = 30
_NOT_TAG = re.compile(r"[^a-z0-9]+")


@dataclass
class TagReading:
    tags: list[str] = field(default_factory=list)  # what is sent
    changed: list[str] = field(default_factory=list)  # "Node.js -> nodejs", "dropped x"
    unmapped: list[str] = field(default_factory=list)  # written tags no rule maps


def normal_tag(tag: str) -> str:
    """`tag` as dev.to takes it: ASCII letters and digits, lower-cased."""
    ascii_text = unicodedata.normalize("NFKD", tag).encode("ascii", "ignore").decode()
    return _NOT_TAG.sub("", ascii_text.lower())[:MAX_TAG_LENGTH]


def normalise(written: list[str], mapping: Mapping[str, str] | None = None) -> TagReading:
    """The tags sent for the tags `written` (`mapping`: the writer's `[forem.tags]`)."""
    mapping = mapping or {}
    lowered = {name.lower(): value for name, value in mapping.items()}
    reading = TagReading()
    for tag in written:
        target = mapping.get(tag, lowered.get(tag.lower()))
        sent = normal_tag(target if target is not None else tag)
        if not sent:
            reading.unmapped.append(tag)
            continue
        if sent in reading.tags:
            if sent != tag.lower():
                reading.changed.append(f"{tag} -> {sent} (already there)")
            continue
        if sent != tag.lower():  # a change of case alone is how dev.to shows every tag
            reading.changed.append(f"{tag} -> {sent}")
        reading.tags.append(sent)
    if len(reading.tags) > MAX_TAGS:
        dropped = reading.tags[MAX_TAGS:]
        reading.tags = reading.tags[:MAX_TAGS]
        reading.changed.append(
            f"kept the first {MAX_TAGS} (dev.to takes at most {MAX_TAGS}), left out "
            + ", ".join(dropped)
        )
    return reading
