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
from typing import TYPE_CHECKING, Any, NamedTuple, TypedDict

from toolkit.content.problems import Kind, Problem, Severity
from toolkit.fsutil import naming, stat_trusted

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.site.shapes import Summary

FORMAT = 3  # 2: posts say whether they are pinned; 3: dates from the lock or git, anchors
# The records below are NamedTuples, written as the JSON arrays they always were: a
# NamedTuple is a tuple, so `json.dumps` writes its fields in order, and a record read back
# from JSON is made again from its array (`from_json`).


class OutputRecord(NamedTuple):
    """An output written: the digest of its inputs (`key`), of its bytes, and its stat."""

    key: str
    digest: str
    mtime_ns: int
    size: int


class FileTrouble(NamedTuple):
    """Why a mirror file cannot be used, and where."""

    line: int
    message: str


class FileRecord(NamedTuple):
    """A template or mirror file: its stat, the digest of its bytes, and for a mirror file
    why it cannot be used (None: it can, or it is a template)."""

    mtime_ns: int
    size: int
    digest: str
    trouble: FileTrouble | None

    @classmethod
    def from_json(cls, data: list[Any]) -> FileRecord:
        mtime_ns, size, digest, trouble = data
        return cls(mtime_ns, size, digest, FileTrouble(*trouble) if trouble else None)


class ThemeFile(NamedTuple):
    """A file of the templates folders, by its name there (`theme_files.template_table`)."""

    path: str
    mtime_ns: int
    size: int


FileTable = dict[str, ThemeFile]  # name -> the file that serves it


class ProblemRow(NamedTuple):
    """A problem as the records keep it: `content.problems.Problem` without its path."""

    line: int
    message: str
    severity: Severity = Severity.ERROR
    kind: Kind = Kind.POST

    @classmethod
    def of(cls, problem: Problem) -> ProblemRow:
        return cls(problem.line, problem.message, problem.severity, problem.kind)

    @classmethod
    def from_json(cls, data: list[Any]) -> ProblemRow:
        """A row as saved."""
        line, message, severity, kind = data
        return cls(int(line), str(message), Severity(severity), Kind(kind))

    @classmethod
    def warning(cls, message: str) -> ProblemRow:
        """A warning of the build about a file as a whole (its line 1)."""
        return cls(1, message, Severity.WARNING)

    def problem(self, path: str) -> Problem:
        """The problem of `path` (`of` the other way)."""
        return Problem(path, self.line, self.message, self.severity, self.kind)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def stops_site(self) -> bool:
        """Whether the problem keeps its post off the site: an error of the post itself.
        One that only the publishing API has does not (`Kind.API`): `check`, `plan` and
        `publish` say it."""
        return self.severity is Severity.ERROR and self.kind is not Kind.API


@dataclass(slots=True)
class SavedPlan:
    """What the last build's plan found, with the digest of its inputs (`replay`)."""

    inputs: str
    records: int  # how many post records it was worked out from
    posts: list[str]  # the posts on the site, in index order
    listings: list[str]  # the other pages' outputs
    problems: list[tuple[str, ProblemRow]]  # (path, row) reported
    drafts_left_out: int

    def to_json(self) -> dict[str, Any]:
        # Hand-written: `asdict` would deep-copy every list at each save of the manifest.
        return {
            "inputs": self.inputs,
            "records": self.records,
            "posts": self.posts,
            "listings": self.listings,
            "problems": self.problems,
            "drafts_left_out": self.drafts_left_out,
        }

    @classmethod
    def from_json(cls, data: Any) -> SavedPlan | None:
        """The plan as saved, or None when it is not one this version saved."""
        try:
            return cls(
                inputs=str(data["inputs"]),
                records=int(data["records"]),
                posts=[str(key) for key in data["posts"]],
                listings=[str(output) for output in data["listings"]],
                problems=[(str(path), ProblemRow.from_json(row)) for path, row in data["problems"]],
                drafts_left_out=int(data["drafts_left_out"]),
            )
        except (KeyError, TypeError, ValueError):
            return None


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
    problems: list[ProblemRow]  # of the post on its own
    excerpt: str | None = None  # first paragraph, from the last render
    links: list[str] = field(default_factory=list)  # posts its body links to
    summary_digest: str = ""  # of what listings show (`pages.summary_of`); "" until known
    # The post's date when it was in the future (a published post is shown from its date
    # on): its problems depend on the clock, so every build checks it again (`needs_check`).
    shown_from: str | None = None
    summary: Summary | None = None  # what listings show, made when needed (not saved)
    # Its JSON text, kept so that saving the manifest after a one-post change encodes one
    # record, not a thousand (FROM_FILE: as the manifest file holds it, taken from there
    # when saving). Whoever changes a field of a record sets it back to None.
    saved: str | None = None

    def to_json(self) -> list[Any]:
        # Hand-written: a positional list, the manifest's compact form (`shown_from` when set).
        data = [
            self.stat,
            self.digest,
            self.info,
            self.problems,
            self.excerpt,
            self.links,
            self.summary_digest,
        ]
        if self.shown_from is not None:  # most posts: seven fields
            data.append(self.shown_from)
        return data

    def json_text(self) -> str:
        if self.saved is None or self.saved is FROM_FILE:
            self.saved = _dumps(self.to_json())
        return self.saved

    @classmethod
    def from_json(cls, data: list[Any]) -> PostRecord:
        stat, digest, info, problems, *rest = data
        rows = [ProblemRow.from_json(row) for row in problems] if problems else []
        return cls(stat, digest, info, rows, *rest)


@dataclass
class Manifest:
    content_key: str = ""  # the settings that post records depend on
    posts: dict[str, PostRecord] = field(default_factory=dict)
    outputs: dict[str, OutputRecord] = field(default_factory=dict)  # by POSIX path
    files: dict[str, FileRecord] = field(default_factory=dict)  # by absolute path
    templates: FileTable = field(default_factory=dict)  # name -> the file that serves it
    closures: dict[str, str] = field(default_factory=dict)  # page template -> digest
    # When the build that made these records began looking at the files (ns since epoch).
    scanned: int = 0
    plan: SavedPlan | None = None  # what the last build's plan found (`replay`)
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
            with _no_collection():
                manifest = cls(
                    content_key=data["content_key"],
                    outputs={k: OutputRecord(*v) for k, v in data["outputs"].items()},
                    files={k: FileRecord.from_json(v) for k, v in data["files"].items()},
                    templates={k: ThemeFile(*v) for k, v in data["templates"].items()},
                    closures=data["closures"],
                    scanned=data.get("scanned", 0),
                )
            if type(manifest.scanned) is not int:
                manifest.scanned = 0
            plan = data.get("plan")
            manifest.plan = SavedPlan.from_json(plan) if isinstance(plan, dict) else None
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
                "plan": self.plan.to_json() if self.plan is not None else None,
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
