"""What the last build knew, so that the next one redoes only what changed.

One JSON file per output folder and set of flags, in `.toolkit/build/` (never in the output
folder, which may be published as it is). It holds:

- `posts`: per post, the stat and digest of its source (a changed stat costs a hash, a
  changed hash costs a parse; see `Manifest.trusts` for when the same stat is not enough), what its front matter says (`info`), its problems, and what
  its last render found (excerpt, links to other posts);
- `outputs`: per file written, the digest of its inputs (`key`), the digest of its bytes and
  its stat, to notice a file changed or removed behind our back;
- `templates`, `files`: the stat and digest of the templates and mirror files, and each page
  template's digest over every template it reaches;
- `plan`: what the last build worked out of the posts (the site's posts in order, its
  listing pages, the posts' problems) and the digest of what it worked that out from, so
  that a build that finds all of it as it was does not work it out again (`replay`).

A file of another format version, or of another configuration of the content rules, is
ignored: the build then starts from nothing, which is always correct.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # not in the stubs

# What `json.dumps` of a string is with ensure_ascii=False, without its set-up per call.
from json.encoder import encode_basestring
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from toolkit.content.problems import Kind, Problem, Severity
from toolkit.fsutil import naming, stat_trusted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.site.pages import Summary

FORMAT = 3  # 2: posts say whether they are pinned; 3: dates from the lock or git, anchors
# The records are JSON arrays read back as lists, whose items differ in type by position.
FileTableJSON = dict[str, list[Any]]  # name -> [path, mtime_ns, size]
OutputRecord = list[Any]  # an output written: [key, digest, mtime_ns, size]
FileRecord = list[Any]  # a template or mirror file: [mtime_ns, size, digest, extra]
# A problem: [line, message, severity, kind] (`row_of`); those the builder makes itself may
# leave out their kind (`Kind.POST`).
Row = list[Any]


class PostInfo(TypedDict):
    """What the rest of the site needs to know about a post (`render.post_info`)."""

    title: str
    slug: str
    date: str | None  # ISO 8601: the site's date (`date_written`, else `content.dates`)
    date_written: str | None  # the front matter's `date:`
    tags: list[str]
    description: str
    series: str | None
    published: bool
    premium: bool
    pinned: bool  # listed first on the home page
    canonical: str | None
    cover: str | None  # as written: a URL, or a path relative to the post
    cover_file: str | None  # the cover's path under the content folder, when it is a file there
    words: int
    images: list[list[Any]]  # [file path, whether it existed] of each relative image
    files: list[str]  # content-relative paths of the files it refers to: what the site copies


def row_of(problem: Problem) -> Row:
    """A problem as the records keep it."""
    return [problem.line, problem.message, str(problem.severity), str(problem.kind)]


def problem_of(path: str, row: Row) -> Problem:
    """A row of the records as the problem of `path` (`row_of` the other way)."""
    kind = Kind(row[3]) if len(row) > 3 else Kind.POST
    return Problem(path, row[0], row[1], Severity(row[2]), kind)


def stops_site(row: Row) -> bool:
    """Whether a problem keeps its post off the site: an error of the post itself. One that
    only the publishing API has does not (`Kind.API`): `check`, `plan` and `publish` say it."""
    return bool(row[2] == Severity.ERROR and (len(row) < 4 or row[3] != Kind.API))


def digest_of(*parts: Any) -> str:
    """A short, stable digest of JSON-able parts."""
    data = json.dumps(parts, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).hexdigest()


def digest_of_strings(*parts: str) -> str:
    """The same for plain strings, without JSON: for the keys computed for every page."""
    data = "\x1f".join(parts)
    return hashlib.blake2b(data.encode("utf-8"), digest_size=16).hexdigest()


def manifest_name(output_dir: Path, *, drafts: bool, premium: bool) -> str:
    seed = f"{output_dir}\0drafts={drafts}\0premium={premium}"
    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:16] + ".json"


def last_build_name(output_dir: Path) -> str:
    """The file that names the manifest of the last build into `output_dir`: builds with
    other flags into the same folder (`--drafts`, then without) remove each other's files."""
    return hashlib.sha256(str(output_dir).encode("utf-8")).hexdigest()[:16] + ".last"


@dataclass(slots=True)
class PostRecord:
    stat: list[int]  # mtime_ns, size of the source
    digest: str  # of the source's bytes
    info: PostInfo | None  # what the front matter says; None when it cannot be parsed
    problems: list[Row]  # of the post on its own
    excerpt: str | None = None  # first paragraph, from the last render
    links: list[str] = field(default_factory=list)  # posts its body links to
    summary_digest: str = ""  # of what listings show (`pages.summary_of`); "" until known
    summary: Summary | None = None  # what listings show, made when needed (not saved)
    # Its JSON text, kept so that saving the manifest after a one-post change encodes one
    # record, not a thousand (FROM_FILE: as the manifest file holds it, taken from there
    # when saving). Whoever changes a field of a record sets it back to None.
    saved: str | None = None

    def to_json(self) -> list[Any]:
        return [
            self.stat,
            self.digest,
            self.info,
            self.problems,
            self.excerpt,
            self.links,
            self.summary_digest,
        ]

    def json_text(self) -> str:
        if self.saved is None or self.saved is FROM_FILE:
            self.saved = _dumps(self.to_json())
        return self.saved

    @classmethod
    def from_json(cls, data: list[Any]) -> PostRecord:
        return cls(*data)


@dataclass
class Manifest:
    content_key: str = ""  # the settings that post records depend on
    posts: dict[str, PostRecord] = field(default_factory=dict)
    outputs: dict[str, OutputRecord] = field(default_factory=dict)  # by POSIX path
    files: dict[str, FileRecord] = field(default_factory=dict)  # by absolute path
    templates: FileTableJSON = field(default_factory=dict)  # name -> [path, mtime, size]
    closures: dict[str, str] = field(default_factory=dict)  # page template -> digest
    # When the build that made these records began looking at the files (ns since epoch).
    scanned: int = 0
    # What the last build's plan found, with the digest of its inputs (`replay.Plan`).
    plan: dict[str, Any] | None = None
    # The file the records were loaded from: their texts, for `save`.
    loaded_from: str = field(default="", repr=False)

    def trusts(self, mtime_ns: int) -> bool:
        """Whether a file whose stat is the one recorded is unchanged (`stat_trusted` when
        the build that recorded it looked)."""
        return stat_trusted(mtime_ns, self.scanned)

    @classmethod
    def load(cls, path: Path, content_key: str) -> Manifest:
        try:
            # Decoded once: the text is kept for `save`.
            raw = path.read_bytes().decode("utf-8")
            with _no_collection():  # JSON makes no cycle: nothing for the collector to find
                data = json.loads(raw)
        except (OSError, ValueError):
            return cls(content_key=content_key)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return cls(content_key=content_key)
        try:
            manifest = cls(
                content_key=data["content_key"],
                outputs=data["outputs"],
                files=data["files"],
                templates=data["templates"],
                closures=data["closures"],
                scanned=data.get("scanned", 0),
            )
            if type(manifest.scanned) is not int:
                manifest.scanned = 0
            plan = data.get("plan")
            manifest.plan = plan if isinstance(plan, dict) else None
            if manifest.content_key == content_key:
                with _no_collection():
                    manifest.posts = {k: PostRecord.from_json(v) for k, v in data["posts"].items()}
                for record in manifest.posts.values():
                    record.saved = FROM_FILE
                manifest.loaded_from = raw
            else:
                manifest.content_key = content_key
        except (KeyError, TypeError, ValueError, AttributeError):
            return cls(content_key=content_key)
        return manifest

    def save(self, path: Path) -> None:
        """Write the manifest atomically (a temporary file renamed over the old one)."""
        rest = _dumps(
            {
                "format": FORMAT,
                "content_key": self.content_key,
                "templates": self.templates,
                "closures": self.closures,
                "scanned": self.scanned,
                "plan": self.plan,
                "files": dict(sorted(self.files.items())),
                "outputs": dict(sorted(self.outputs.items())),
            }
        )
        self._texts_from_file()
        # One post a line: the next save finds the texts of the records it loaded there.
        posts = "".join(
            f"\n{encode_basestring(key)}:{self.posts[key].json_text()},"
            for key in sorted(self.posts)
        )[:-1]
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with naming(path, temporary):  # an OS error names the manifest, not its temp file
            try:
                temporary.write_text(f'{rest[:-1]},"posts":{{{posts}}}}}', encoding="utf-8")
                os.replace(temporary, path)
            except BaseException:
                temporary.unlink(missing_ok=True)
                raise

    def _texts_from_file(self) -> None:
        """The records unchanged since they were loaded take their text from the file, as
        `save` wrote it: one post a line at its end (a newline is never inside a JSON
        text). Those of a file laid out otherwise are encoded again."""
        unchanged = [r for r in self.posts.values() if r.saved is FROM_FILE]
        if not unchanged:
            return
        texts: dict[str, str] = {}
        with contextlib.suppress(ValueError, IndexError):
            lines = self.loaded_from.split("\n")
            for line in lines[1:]:
                end = line.find('":', 1)
                if end > 0 and "\\" not in (key := line[1:end]) and '"' not in key:
                    # A key without an escape, which ends at its first quote: read
                    # as it is (a thousand times, quicker than `scanstring`).
                    end += 1
                else:
                    key, end = scanstring(line, 1)
                if line[0] != '"' or line[end] != ":":
                    break
                text = line[end + 1 :]
                texts[key] = text[:-2] if text.endswith("}}") else text.removesuffix(",")
        for key, record in self.posts.items():
            if record.saved is FROM_FILE:
                record.saved = texts.get(key)  # None: encoded again
        self.loaded_from = ""


FROM_FILE = "\0from the manifest file"  # `PostRecord.saved`: see `Manifest._texts_from_file`


@contextlib.contextmanager
def _no_collection() -> Iterator[None]:
    """The cyclic garbage collector off while thousands of records that hold no cycle are
    made: it would go over them again and again (5 ms of a build of 5,000 posts)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
