"""`toolkit pull`: bring remote articles into `content/` as posts.

An article no local post maps to becomes a new file, named from its title or slug (reduced
to a safe file name inside `content/`), never written over an existing file. Its front
matter keeps only what the publishing API defines: a remote article cannot make itself
premium or choose the path of its page.

A post bound to an article is given back as the writer wrote it (`toolkit.sync.restore`):
when the article was edited on the website and the post has not changed since it was last
sent, the website's changes are merged into the file (front matter key by key in the
writer's style, body lines three ways), so only what changed there changes here. When
both changed, the post is left as it is (`differs`, and the run fails) unless `merge`
(three ways from the body last sent, `toolkit.sync.sent`; overlapping edits between
conflict markers, `conflict`) or `overwrite` (the website's version wins, still in the
writer's form). A post whose article has not changed since it was last sent, or whose
content is what the website holds, is never rewritten. A post still holding conflict
markers is reported as in conflict until the writer resolves it.

Every post taken is recorded in `toolkit.lock` as in sync, so `toolkit publish` right
after a pull writes nothing; a merge that kept changes of the post's own records only the
website's body as seen, so publish sends those changes. The caller
(`toolkit.commands.pull`) holds the run lock from before this reads `toolkit.lock` to its
end.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import Field

from toolkit.clients.forem import ForemClient
from toolkit.clients.forem_models import Article
from toolkit.config import Config
from toolkit.content import conflicts, payload_for
from toolkit.content.accounts import Account
from toolkit.content.fields import FOREM_KEYS, slugify
from toolkit.content.payload import body_digest, dump_front_matter
from toolkit.content.post import Post, parse_post
from toolkit.content.problems import PostError
from toolkit.errors import SyncError, UnsafeNameError
from toolkit.fsutil import atomic_write, path_inside, safe_name
from toolkit.redact import quoted
from toolkit.sync import sent
from toolkit.sync.binding import bind_project
from toolkit.sync.engine import MissingKey
from toolkit.sync.ledger import Ledger, LedgerEntry
from toolkit.sync.merge import line_ops
from toolkit.sync.remote import RemoteState
from toolkit.sync.restore import Names, writer_form
from toolkit.sync.stray import not_a_post

BOM = "\ufeff".encode()


class PullAction(StrEnum):
    CREATED = "created"  # a new local post
    OVERWRITTEN = "overwritten"  # a local post replaced by its remote version
    DIFFERS = "differs"  # changed on both sides; left alone (a conflict: --merge, --overwrite)
    KEPT = "kept"  # differs, with no record to tell which side changed; left alone
    MERGED = "merged"  # the website's changes merged with the post's own (--merge)
    CONFLICT = "conflict"  # left with conflict markers where both changed the same lines
    UNCHANGED = "unchanged"
    GONE = "gone"  # its post was deleted here: not pulled back (unpublish or forget it)
    FAILED = "failed"


# The actions whose post pull has not done its job for: the run fails (exit 1).
NOT_OK = frozenset({PullAction.DIFFERS, PullAction.CONFLICT, PullAction.FAILED})


@dataclass
class PullOutcome:
    path: str
    action: PullAction
    article_id: int
    message: str = ""
    # In a team's repository: the writer whose account holds the article (their folder);
    # only a team's documents carry it (`commands.results.sync.TeamPullJson`).
    writer: Annotated[str | None, Field(exclude=True)] = field(default=None, kw_only=True)

    @property
    def ok(self) -> bool:
        """Whether pull did its job for this post. A post changed on both sides (`differs`,
        `conflict`) or that failed is not; one deleted here (`gone`) is: pull leaves it
        deleted on purpose, as publish does, and names what would take it off the website."""
        return self.action not in NOT_OK


@dataclass
class PullResult:
    outcomes: list[PullOutcome] = field(default_factory=list)
    lock_wait: str | None = None  # said while another run held the run lock
    dry_run: bool = False  # nothing was written
    # A team's repository (`[writers]`): each writer pulled with their key; those without.
    team: bool = False
    missing_keys: list[MissingKey] = field(default_factory=list)

    def count(self, action: PullAction) -> int:
        return sum(1 for o in self.outcomes if o.action is action)

    @property
    def failed(self) -> list[PullOutcome]:
        return [o for o in self.outcomes if o.action is PullAction.FAILED]

    @property
    def in_conflict(self) -> list[PullOutcome]:
        """Posts left changed on both sides: the run has not done its job for them."""
        return [o for o in self.outcomes if o.action in (PullAction.DIFFERS, PullAction.CONFLICT)]

    @property
    def ok(self) -> bool:
        """Every post's outcome is ok: nothing failed, nothing is left in conflict (and
        in a team's repository, no writer was skipped for want of a key)."""
        return all(o.ok for o in self.outcomes) and not self.missing_keys


def post_text(article: Article) -> str:
    """A post file for a remote article: front matter (from its body, else from its fields)
    and body. `published` always says the remote state, so a draft stays a draft."""
    body_markdown = (article.body_markdown or "").replace("\r\n", "\n")
    try:
        parsed = parse_post(Path(f"{article.slug or article.id}.md"), "remote", body_markdown)
        meta, body = dict(parsed.meta), parsed.body
    except PostError:  # the API accepted it, so this is rare: keep the body whole
        meta, body = {}, body_markdown
    meta.setdefault("title", article.title)
    meta["published"] = bool(article.published)
    if "tags" not in meta and article.tags:
        meta["tags"] = ", ".join(article.tags)
    if article.canonical_url and article.canonical_url != article.url:
        meta.setdefault("canonical_url", article.canonical_url)
    if article.cover_image:
        meta.setdefault("cover_image", article.cover_image)
    if article.published and article.published_at:
        meta.setdefault("date", article.published_at)  # the site sorts and shows posts by it
    # Only the keys the API defines, in its order: anything else (`premium`, `slug`, ...)
    # would let the remote side decide what only the writer may.
    ordered = {key: meta[key] for key in FOREM_KEYS if key in meta}
    return f"---\n{dump_front_matter(ordered)}---\n{body}"


def _safe_stem(text: str, fallback: str) -> str:
    try:
        return safe_name(text)
    except UnsafeNameError:
        return fallback


def file_stem_for(article: Article, taken: Callable[[str], bool]) -> str:
    """From the title; else the remote slug (with the API's random suffix); else + the id.
    The slug comes from the server: only what is left of it as a safe file name is used."""
    plain = _safe_stem(slugify(article.title), f"post-{article.id}")
    remote = _safe_stem(article.slug, plain)
    for stem in (plain, remote):
        if not taken(stem):
            return stem
    return f"{remote}-{article.id}"


def _as_file(path: Path, text: str) -> bytes:
    """`text` (as parsed: no byte order mark, plain newlines) in the form of the file at
    `path`: its byte order mark kept, and each line the same as one of the file's keeps
    that line's end; a line new or changed takes the end of the file's first line."""
    try:
        with path.open("rb") as handle:
            data = handle.read()
    except OSError:
        data = b""
    bom = BOM if data.startswith(BOM) else b""
    old_lines, old_ends = _split_lines(data[len(bom) :].decode("utf-8", "surrogateescape"))
    new_lines, new_ends = _split_lines(text)
    usual = "\r\n" if old_ends[:1] == ["\r\n"] else "\n"
    ends = [usual if end else "" for end in new_ends]
    if "\r\n" in old_ends:  # otherwise every end is a plain newline already
        for op, a_start, a_end, b_start, _ in line_ops(old_lines, new_lines):
            if op != "equal":
                continue
            for offset in range(a_end - a_start):
                old_end, j = old_ends[a_start + offset], b_start + offset
                if old_end and new_ends[j]:
                    ends[j] = old_end
    return bom + "".join(line + end for line, end in zip(new_lines, ends, strict=True)).encode(
        "utf-8", "surrogateescape"
    )


def _split_lines(text: str) -> tuple[list[str], list[str]]:
    """The lines of `text` without their ends, and each one's end (`\r\n`, `\n`, or ""
    for a last line without one)."""
    parts = text.split("\n")
    lines: list[str] = []
    ends: list[str] = []
    for part in parts[:-1]:
        crlf = part.endswith("\r")
        lines.append(part[:-1] if crlf else part)
        ends.append("\r\n" if crlf else "\n")
    if parts[-1]:
        lines.append(parts[-1])
        ends.append("")
    return lines, ends


def _names(key: str, article: Article) -> Names:
    return Names(f"local {key}", f"website (article {article.id})")


class _Puller:
    """One pull: the ledger (toolkit.lock), the posts, and what each article comes to."""

    def __init__(
        self,
        config: Config,
        ledger: Ledger,
        *,
        overwrite: bool,
        merge: bool,
        dry_run: bool = False,
        account: Account | None = None,
    ):
        self.config = config
        self.account = account  # a team's writer: their entries record them
        self.ledger = ledger
        self.overwrite = overwrite
        self.merge = merge
        self.dry_run = dry_run  # decide everything, write nothing
        self.moves: dict[str, str] = {}  # post key -> the path whose lock entry it takes over

    def write(self, path: Path, data: bytes) -> str | None:
        """Write a post's file; a symlinked post is written through to its target when
        that stays in the project, else refused: why it was not written (None: it was)."""
        target = path
        if path.is_symlink():
            resolved = path.resolve()
            if not resolved.is_relative_to(self.config.root.resolve()):
                return (
                    f"a symlink to {quoted(str(resolved), 120)}, outside the project: "
                    "not written through"
                )
            target = resolved
        if not self.dry_run:
            atomic_write(target, data)
        return None

    def keep(self, body: str, previous: str | None = None) -> None:
        if not self.dry_run:
            sent.keep(self.config.state_dir, body, previous)

    def record(self, key: str, entry: LedgerEntry) -> None:
        if not self.dry_run:
            self.ledger.record(key, entry, replaces=self.moves.get(key))

    def base_of(self, post: Post, entry: LedgerEntry) -> str | None:
        """The body last sent: kept under `.toolkit/sent/`, else the committed version of
        the post whose payload is the one the lock says was sent."""
        kept = sent.recall(self.config.state_dir, entry.remote_digest)
        if kept is not None:
            return kept

        def sent_form(text: str) -> str | None:
            try:
                version = parse_post(post.path, post.key, text)
                payload = payload_for(version, self.config)
            except PostError:
                return None
            return payload.body_markdown if payload.digest == entry.sent_digest else None

        return sent.from_git(self.config.root, post.path, sent_form)

    def take(self, post: Post, article: Article, entry: LedgerEntry | None = None) -> PullOutcome:
        """A post bound to `article` (`entry`: the lock entry that goes with it, when the
        post was renamed): take the website's version where it changed."""
        key = post.key
        entry = entry or self.ledger.get(key)
        raw = article.body_markdown or ""
        remote_body, remote_digest = raw.replace("\r\n", "\n"), body_digest(raw)
        if conflicts.marker_lines(post.source) and not self.overwrite:
            return PullOutcome(
                key,
                PullAction.CONFLICT,
                article.id,
                "still holds conflict markers: keep the lines you want and remove them",
            )
        payload = payload_for(post, self.config)
        # A body toolkit sent and never saw land is its own, not a website edit: publish
        # sends the post again.
        ours = (entry.pending_body_digest, *entry.unconfirmed) if entry else ()
        remote_changed = entry is None or (
            entry.remote_digest != remote_digest and remote_digest not in ours
        )
        local_clean = entry is not None and entry.sent_digest == payload.digest
        # What the post would send is what the website holds: the same content, only
        # written another way (quotes, key order, the defaults publish fills in).
        same = payload.body_markdown == remote_body and bool(article.published) == post.published
        # Neither side changed since the last send (or pull): nothing to take, even with
        # `overwrite` (an onboarded post's `date` is the writer's, not a change to undo).
        if same or not (remote_changed or (self.overwrite and not local_clean)):
            return PullOutcome(key, PullAction.UNCHANGED, article.id)
        base = payload.body_markdown
        if not (local_clean or self.overwrite):
            if entry is None:  # bound by identity, never sent from here: the file stays
                return PullOutcome(
                    key,
                    PullAction.KEPT,
                    article.id,
                    "differs from the website, with no record of a last send to tell which "
                    f"side changed; `toolkit diff {key}` shows both, `toolkit pull "
                    f"--overwrite` takes the website's, `toolkit publish --force {key}` sends "
                    "yours",
                )
            if not self.merge:
                return PullOutcome(
                    key,
                    PullAction.DIFFERS,
                    article.id,
                    "changed on the website and here since it was last sent; "
                    f"`toolkit diff {key}` shows both, `toolkit pull --merge` merges them, "
                    "`toolkit pull --overwrite` takes the website's",
                )
            recalled = self.base_of(post, entry)
            if recalled is None:
                return PullOutcome(
                    key,
                    PullAction.DIFFERS,
                    article.id,
                    "changed on both sides, and the body last sent is neither in "
                    ".toolkit/sent/ nor in the post's git history, so there is no base to "
                    "merge from; `toolkit diff` shows both sides",
                )
            base = recalled
        prefer_theirs = base == payload.body_markdown
        try:
            merged = writer_form(
                post,
                sent=payload.body_markdown,
                base=base,
                theirs=remote_body,
                article=article,
                prefer_theirs=prefer_theirs,
                names=_names(key, article),
            )
            text, clashes = merged.text, merged.conflicts
        except (PostError, yaml.YAMLError) as exc:
            if not prefer_theirs:
                return PullOutcome(key, PullAction.FAILED, article.id, str(exc).splitlines()[0])
            text, clashes = post_text(article), 0  # the website's version as it is
        if text != post.source:
            problem = self.write(post.path, _as_file(post.path, text))
            if problem is not None:
                return PullOutcome(key, PullAction.FAILED, article.id, problem)
        self.keep(raw, entry.remote_digest if entry else None)
        if clashes:
            assert entry is not None  # a merge needs the lock's record
            self.record(
                key,
                replace(entry, remote_digest=remote_digest, remote_edited_at=article.edited_at),
            )
            return PullOutcome(
                key,
                PullAction.CONFLICT,
                article.id,
                f"{clashes} overlapping change(s) written between conflict markers",
            )
        merged_from = None if prefer_theirs else entry
        return self.recorded(post.path, key, text, article, merged_from=merged_from)

    def recorded(
        self,
        path: Path,
        key: str,
        text: str,
        article: Article,
        *,
        merged_from: LedgerEntry | None = None,
    ) -> PullOutcome:
        """Record the post as it now is (`text`); `merged_from`: the entry before a merge
        that kept changes of the post's own (they are still to be sent)."""
        try:
            post = parse_post(path, key, text)
            payload = payload_for(post, self.config)
        except PostError as exc:
            return PullOutcome(key, PullAction.FAILED, article.id, str(exc))
        raw = article.body_markdown or ""
        if merged_from is not None and payload.body_markdown != raw.replace("\r\n", "\n"):
            self.record(
                key,
                replace(
                    merged_from, remote_digest=body_digest(raw), remote_edited_at=article.edited_at
                ),
            )
            return PullOutcome(
                key, PullAction.MERGED, article.id, "with changes of its own, still to publish"
            )
        self.record(
            key,
            LedgerEntry(
                article_id=article.id,
                url=article.url,
                sent_digest=payload.digest,
                remote_digest=body_digest(raw),
                remote_edited_at=article.edited_at,
                published=bool(article.published),
                published_at=article.published_at,
                account=self.account.writer if self.account is not None else None,
            ),
        )
        action = PullAction.OVERWRITTEN if merged_from is None else PullAction.MERGED
        return PullOutcome(key, action, article.id)


def pull_articles(
    config: Config,
    client: ForemClient,
    *,
    overwrite: bool = False,
    merge: bool = False,
    dry_run: bool = False,
    lock_wait: str | None = None,
    account: Account | None = None,
    ledger: Ledger | None = None,
) -> PullResult:
    """Write the remote articles as posts (`dry_run`: say what would be written, write
    nothing); the caller holds the run lock unless `dry_run` (`lock_wait`: what it was
    told while it waited for it, kept in the result).

    `account`: in a team's repository, the writer `client` holds the key of: only their
    posts are bound, a new post is written into their folder, and an article another
    account's post holds (the organisation's lead pulling with FOREM_API_KEY) is left to
    it. `ledger`: the lock the accounts of one run share."""
    if config.source.generator != "devto":
        # Its posts are the generator's: dev.to's front matter written back would change
        # the writer's site.
        raise SyncError(
            f"pull: the posts are written for {config.source.generator} ([source] generator); "
            "toolkit does not write dev.to's version back into them (edit them in your blog "
            "and publish)"
        )
    result = PullResult(lock_wait=lock_wait, dry_run=dry_run)
    if ledger is None:
        ledger = Ledger.of(config)
    puller = _Puller(
        config, ledger, overwrite=overwrite, merge=merge, dry_run=dry_run, account=account
    )
    remote = RemoteState(client.iter_my_articles("all"))

    def mine(key: str) -> bool:
        return account is None or account.owns(config, key)

    # Every post bound at once, as publish binds them (a team's: the account's posts).
    bound, posts, problems = bind_project(config, remote, ledger, account=account)
    # Articles another account's posts hold: theirs, never a second file here.
    others = {e.article_id for k, e in ledger.entries.items() if not mine(k)}
    matches = bound.matches
    puller.moves = {key: m.moved_from for key, m in matches.items() if m.moved_from}
    by_key = {p.key: p for p in posts}
    owned = {m.article.id: key for key, m in matches.items() if m.article is not None}
    # Articles the ledger gives to a post that cannot be read now (a conflict left in its
    # front matter, a typo): never pulled again as a new post beside it.
    unreadable = {p.path: p for p in problems if p.is_error}
    locked = {
        e.article_id: k for k, e in ledger.entries.items() if k in unreadable and k not in by_key
    }
    # Articles whose post was deleted here (their ledger entry's file is gone and no other
    # post took them): the deletion stands, as `plan` says, until unpublished or forgotten.
    gone = {g.entry.article_id: g.key for g in bound.gone if mine(g.key)}
    # Articles whose post is no post now (no front matter, excluded): never a second file.
    strays = {g.entry.article_id: g.key for g in bound.strays if mine(g.key)}
    # Articles two posts claim, or only a post's title binds: never a new file beside them.
    contested = bound.contested()
    content_dir = config.site.content_dir
    if account is not None and account.writer is not None:
        content_dir = content_dir / account.writer  # a writer's new posts: their folder
    slugs = {p.slug for p in posts}

    def taken(stem: str) -> bool:
        return stem in slugs or (content_dir / f"{stem}.md").exists()

    for article in sorted(remote.articles, key=lambda a: a.id):
        if article.id in others and article.id not in owned:
            continue
        key = owned.get(article.id)
        if key is not None:
            result.outcomes.append(puller.take(by_key[key], article, matches[key].entry))
            continue
        if article.id in locked:
            bad = locked[article.id]
            try:
                held = conflicts.marker_lines((config.root / bad).read_text(errors="replace"))
            except OSError:
                held = []
            if held and overwrite:  # a merge given up: the website's version, as it is
                text = post_text(article)
                problem = puller.write(config.root / bad, text.encode("utf-8"))
                result.outcomes.append(
                    puller.recorded(config.root / bad, bad, text, article)
                    if problem is None
                    else PullOutcome(bad, PullAction.FAILED, article.id, problem)
                )
                continue
            result.outcomes.append(
                PullOutcome(
                    bad,
                    PullAction.CONFLICT if held else PullAction.FAILED,
                    article.id,
                    "still holds conflict markers: keep the lines you want and remove them"
                    if held
                    else f"cannot be read: {unreadable[bad].message}",
                )
            )
            continue
        if article.id in gone:
            result.outcomes.append(
                PullOutcome(
                    gone[article.id],
                    PullAction.GONE,
                    article.id,
                    f"deleted here, not pulled back: toolkit unpublish {gone[article.id]} "
                    "or forget it",
                )
            )
            continue
        if article.id in strays:
            stray = strays[article.id]
            result.outcomes.append(
                PullOutcome(
                    stray,
                    PullAction.FAILED,
                    article.id,
                    f"is no post now ({not_a_post(config, stray)}); not pulled again beside "
                    f"it: make it a post again, or `toolkit forget {stray}`",
                )
            )
            continue
        if article.id in contested:
            claimant = contested[article.id][0]
            weak = matches[claimant].resembles
            shared, other = matches[claimant].resemblance()
            result.outcomes.append(
                PullOutcome(
                    claimant,
                    PullAction.KEPT if weak is not None else PullAction.FAILED,
                    article.id,
                    (
                        f"has the {shared} of article {article.id} but not its {other}; not "
                        f"pulled beside it: `toolkit diff {claimant}` shows both"
                    )
                    if weak is not None
                    else f"not pulled beside it: {matches[claimant].problem}",
                )
            )
            continue
        stem = file_stem_for(article, taken)
        slugs.add(stem)
        try:
            path = path_inside(content_dir, f"{stem}.md")
        except UnsafeNameError as exc:
            result.outcomes.append(
                PullOutcome(
                    config.relative(content_dir / f"{stem}.md"),
                    PullAction.FAILED,
                    article.id,
                    exc.message,
                )
            )
            continue
        text = post_text(article)
        problem = puller.write(path, text.encode("utf-8"))
        if problem is not None:
            key = config.relative(path)
            result.outcomes.append(PullOutcome(key, PullAction.FAILED, article.id, problem))
            continue
        puller.keep(article.body_markdown or "")
        outcome = puller.recorded(path, config.relative(path), text, article)
        if outcome.action is PullAction.OVERWRITTEN:
            outcome.action = PullAction.CREATED
        result.outcomes.append(outcome)
    if account is not None:
        for outcome in result.outcomes:
            outcome.writer = account.writer
    return result
