"""The identity rules held to their class (#43): random sequences of new posts, edits,
renames, copies (with the `id:` they carry), new files at old paths, posts that stop
being posts, publishes (of everything or one path), pulls, unpublishes and forgets, over
a sandbox account. After every step:

- no article receives another post's text: an article's text changes lineage only when
  no file of its old lineage is left (a rename, a post rewritten in place, a post
  deleted and its entry forgotten) and never when the old text is a website-only one;
- nothing is published that says draft: an article made public in a step is the article
  of a file that says `published: true`;
- pull changes no file's lineage and writes no second file for a lineage a file holds.

Every post's text names its lineage (`Text of L3, version 2.`); a copy is reworked into a
lineage of its own, the point-1 case (a copy keeps the `id:` of the post it came from).
The sandbox runs in this process, its rate limits off, reached without a socket
(`ForemSandbox.transport()`), and the domain functions are called as the commands call
them, so a sequence costs some 20 ms a step. `IDENTITY_EXAMPLES` sequences (500 by
default, `TOOLKIT_IDENTITY_EXAMPLES` in the environment to change it), in five parts that
the test workers share out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.support.forem_sandbox import ForemSandbox
from toolkit.clients import Clients
from toolkit.config import load_config
from toolkit.errors import ToolkitError
from toolkit.sync.engine import SyncEngine
from toolkit.sync.pull import pull_articles
from toolkit.sync.remote import text_of
from toolkit.sync.retire import forget_post, unpublish_post

IDENTITY_EXAMPLES = int(os.environ.get("TOOLKIT_IDENTITY_EXAMPLES", "500"))

CONFIG = """
[site]
title = "Identity property"

[forem]
rate_window = 0.001
"""

PATHS = ("a", "b", "c")
TOOLKIT_STEPS = ("publish", "pull", "unpublish", "forget")
TITLES = ("Title one", "Title two", "Title three")
MARKER = re.compile(r"Text of ((?:L|W|seed-)\d+), version (\d+)\.")
PUBLISHED = re.compile(r"^published: (true|false)$", re.MULTILINE)


# One per part. Each sequence resets it (`reset()`), so the examples of a part share it.
@pytest.fixture
def own_sandbox() -> Iterator[ForemSandbox]:
    with ForemSandbox(db_path=None, rate_window=1.0) as server:
        yield server


# -- the steps ------------------------------------------------------------------------------

path_names = st.sampled_from(PATHS)
titles = st.sampled_from(TITLES)
publishes = st.one_of(st.tuples(st.just("publish")), st.tuples(st.just("publish"), path_names))
steps = st.one_of(
    # What a writer does to the files, and to the website.
    st.one_of(
        st.tuples(st.just("new"), path_names, titles, st.booleans()),
        st.tuples(st.just("edit"), path_names),
        st.tuples(st.just("toggle"), path_names),
        st.tuples(st.just("retitle"), path_names, titles),
        st.tuples(st.just("rename"), path_names, path_names),
        st.tuples(st.just("reuse"), path_names, path_names, titles),
        st.tuples(st.just("copy"), path_names, path_names),
        st.tuples(st.just("stamp"), path_names),
        st.tuples(st.just("delete"), path_names),
        st.tuples(st.just("break"), path_names),
        st.tuples(st.just("mend"), path_names),
        st.tuples(st.just("lose lock")),
        st.tuples(st.just("website"), titles),
    ),
    # What toolkit is asked to do, as often.
    publishes,
    st.one_of(
        publishes,
        st.tuples(st.just("pull")),
        st.tuples(st.just("unpublish"), path_names),
        st.tuples(st.just("forget"), path_names),
    ),
)


@dataclass
class Account:
    """The project, the account, and what the oracle knows of them."""

    root: Path
    sandbox: ForemSandbox
    env: dict[str, str]
    reader: httpx.Client  # the oracle's own client of the account (one per sequence)
    lineages: int = 0
    log: list[str] = field(default_factory=list)
    lock_before: dict[str, Any] = field(default_factory=dict)

    def lock_entries(self) -> dict[str, Any]:
        lock = self.root / "toolkit.lock"
        return json.loads(lock.read_text())["posts"] if lock.exists() else {}

    @property
    def content(self) -> Path:
        return self.root / "content"

    def file(self, name: str) -> Path:
        return self.content / f"{name}.md"

    def files(self) -> dict[str, str]:
        return {
            p.relative_to(self.root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(self.content.rglob("*.md"))
        }

    def articles(self) -> dict[int, dict[str, Any]]:
        answer = self.reader.get("/api/articles/me/all", params={"per_page": 1000})
        answer.raise_for_status()
        return {a["id"]: a for a in answer.json()}

    def new_text(self, title: str, published: bool, extra: str = "") -> str:
        self.lineages += 1
        return (
            f"---\ntitle: {title}\npublished: {'true' if published else 'false'}\n{extra}"
            f"---\nText of L{self.lineages}, version 1.\n"
        )

    def run(self, step: tuple[Any, ...]) -> None:
        kind, *args = step
        self.log.append(" ".join(str(a) for a in step))
        config = load_config(self.root / "toolkit.toml", env=self.env)
        if kind in TOOLKIT_STEPS:
            with Clients(config, transport=self.sandbox.transport()).forem() as client:
                try:
                    if kind == "publish":
                        SyncEngine(config, client).publish(
                            [f"content/{args[0]}.md"] if args else []
                        )
                    elif kind == "pull":
                        pull_articles(config, client)
                    elif kind == "unpublish":
                        unpublish_post(config, client, self.root / f"content/{args[0]}.md")
                    else:
                        forget_post(config, client, self.root / f"content/{args[0]}.md")
                except ToolkitError:
                    pass  # a refusal is an answer; what it wrote is checked as any step's
            return
        self.edit_files(kind, *args)

    def edit_files(self, kind: str, *args: Any) -> None:
        if kind == "lose lock":  # deleted, or never committed: identity finds it all again
            (self.root / "toolkit.lock").unlink(missing_ok=True)
            return
        if kind == "website":  # an article written on the website, no post of it here
            self.lineages += 1
            body = f"---\ntitle: {args[0]}\npublished: true\n---\nText of W{self.lineages}, version 1.\n"
            self.sandbox.control(
                "POST",
                "/forem/articles",
                {"username": "demo", "articles": [{"body_markdown": body, "published": True}]},
            )
            return
        name, *rest = args
        args = tuple(rest)
        path = self.file(name)
        there = path.exists()
        text = path.read_text(encoding="utf-8") if there else ""
        if kind == "new":
            title, published = args
            path.write_text(self.new_text(title, published), encoding="utf-8")
        elif not there:
            return
        elif kind == "edit":
            found = MARKER.search(text)
            if found is None:
                return
            version = int(found.group(2)) + 1
            path.write_text(
                text[: found.start()]
                + f"Text of {found.group(1)}, version {version}."
                + text[found.end() :],
                encoding="utf-8",
            )
        elif kind == "toggle":
            path.write_text(
                PUBLISHED.sub(
                    lambda m: f"published: {'false' if m.group(1) == 'true' else 'true'}",
                    text,
                    count=1,
                ),
                encoding="utf-8",
            )
        elif kind == "retitle":
            path.write_text(
                re.sub(r"^title: .*$", f"title: {args[0]}", text, count=1, flags=re.MULTILINE),
                encoding="utf-8",
            )
        elif kind in ("rename", "copy", "reuse"):
            target = self.file(args[0])
            if target.exists():
                return
            if kind == "rename":
                path.rename(target)
            elif kind == "reuse":  # renamed, and a new post written at the old name
                path.rename(target)
                path.write_text(self.new_text(args[1], False), encoding="utf-8")
            else:  # a copy reworked: the same front matter (an `id:` too), its own text
                front = text.split("\n---\n", 1)[0] if "\n---\n" in text else "---"
                self.lineages += 1
                target.write_text(
                    f"{front}\n---\nText of L{self.lineages}, version 1.\n", encoding="utf-8"
                )
        elif kind == "stamp":  # devto-cli's `id:`: the article that holds this file's text
            mine = self.lineage(text)
            held = [i for i, a in self.articles().items() if self.lineage_of_article(a) == mine]
            if len(held) == 1 and "\nid: " not in text and text.startswith("---\n"):
                path.write_text(text.replace("---\n", f"---\nid: {held[0]}\n", 1))
        elif kind == "delete":
            path.unlink()
        elif kind == "break":  # a blank line before the front matter: no post any more
            if text.startswith("---"):
                path.write_text("\n" + text, encoding="utf-8")
        elif kind == "mend":
            path.write_text(text.lstrip("\n"), encoding="utf-8")

    # -- the oracle ---------------------------------------------------------------------

    @staticmethod
    def lineage(text: str) -> str | None:
        found = MARKER.search(text)
        return found.group(1) if found else None

    def lineage_of_article(self, article: dict[str, Any]) -> str:
        return self.lineage(article.get("body_markdown") or "") or f"seed-{article['id']}"

    def file_lineage(self, text: str, articles: dict[int, dict[str, Any]]) -> str | None:
        """A file's lineage: its marker, or the seeded article a pull made it from."""
        found = self.lineage(text)
        if found is not None:
            return found
        mine = text_of(text)
        for article in articles.values():
            if text_of(article.get("body_markdown") or "") == mine:
                return f"seed-{article['id']}"
        return None

    def check(
        self,
        step: tuple[Any, ...],
        files_before: dict[str, str],
        before: dict[int, dict[str, Any]],
        after: dict[int, dict[str, Any]],
    ) -> None:
        live = {self.file_lineage(t, before) for t in files_before.values()}
        # No lock yet: a title alone adopts a website article (the design's adoption).
        adopting = not self.lock_before
        says_published = {
            self.file_lineage(t, before)
            for t in files_before.values()
            if PUBLISHED.search(t) and PUBLISHED.search(t).group(1) == "true"  # type: ignore[union-attr]
        }
        where = "; ".join(self.log)
        for article_id, now in after.items():
            was = before.get(article_id)
            new = self.lineage_of_article(now)
            if was is not None and (was.get("body_markdown") or "") != (
                now.get("body_markdown") or ""
            ):
                old = self.lineage_of_article(was)
                if old != new:
                    website = old.startswith("seed-") or (old.startswith("W") and not adopting)
                    assert not website and old not in live, (
                        f"article {article_id} ({old}, whose file is there) got the text of "
                        f"{new} after: {where}"
                    )
            made_public = now.get("published") and (was is None or not was.get("published"))
            if made_public:
                assert new in says_published, (
                    f"article {article_id} ({new}) was published, but no file of its "
                    f"says published: true, after: {where}"
                )
        if step[0] == "unpublish" and f"content/{step[1]}.md" in files_before:
            mine = self.file_lineage(files_before[f"content/{step[1]}.md"], before)
            for article_id, now in after.items():
                was = before.get(article_id)
                if was is not None and was.get("published") and not now.get("published"):
                    # The file's own article, or one whose lineage has no file left: a post
                    # rewritten in place keeps its article, as publish would update it.
                    theirs = self.lineage_of_article(was)
                    assert theirs == mine or theirs not in live, (
                        f"unpublish content/{step[1]}.md ({mine}) unpublished article "
                        f"{article_id} ({theirs}, whose file is there), after: {where}"
                    )
        if step[0] == "pull":
            files_after = self.files()
            for key, text in files_before.items():
                if key in files_after:
                    assert self.lineage(files_after[key]) == self.lineage(text), (
                        f"pull wrote another lineage into {key}, after: {where}"
                    )
            # A lineage is held by a post, or by a file that is no post now but that
            # toolkit.lock still records (pull names it, as plan does). A file that is no
            # post and that the lock does not record (forgotten, as pull's own message on
            # such a file says to do to have its article pulled again; or the lock lost)
            # holds nothing toolkit can know of.
            held = {
                self.file_lineage(t, before)
                for key, t in files_before.items()
                if t.startswith("---") or key in self.lock_before
            } - {None}
            for key, text in files_after.items():
                if key not in files_before:
                    assert self.file_lineage(text, after) not in held, (
                        f"pull wrote a second file {key} for a lineage a file holds, after: {where}"
                    )


# The sequences run in `CHUNKS` parts of an equal share each, so that the test workers
# share them out; each part is a test of its own with its own random seed, and together
# they run `IDENTITY_EXAMPLES` sequences (or a few more, the share rounded up). The first
# part is measured by coverage; the others run the same code again and are not
# (`untraced`), which would double their time.
CHUNKS = 5
PARTS = [pytest.param(0)] + [pytest.param(n, marks=pytest.mark.untraced) for n in range(1, CHUNKS)]
IDENTITY = settings(
    max_examples=-(-IDENTITY_EXAMPLES // CHUNKS),
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)


@pytest.mark.timeout(1800)  # 100 sequences: some 16 s alone, longer on a loaded machine
@pytest.mark.parametrize("chunk", PARTS)
@IDENTITY
@given(sequence=st.lists(steps, min_size=1, max_size=14))
# A post rewritten in place (a new text, the same title) keeps its article: unpublishing
# the file unpublishes that article, whose old text has no file left.
@example(
    sequence=[
        ("new", "a", "Title one", True),
        ("publish",),
        ("new", "a", "Title one", False),
        ("unpublish", "a"),
    ]
)
# A post that stopped being one, forgotten (as pull's message on it says, to have its
# article pulled again) or with the lock lost: pull writes the article beside it.
@example(
    sequence=[
        ("new", "a", "Title one", False),
        ("publish",),
        ("break", "a"),
        ("forget", "a"),
        ("pull",),
    ]
)
@example(
    sequence=[
        ("new", "a", "Title one", False),
        ("publish",),
        ("lose lock",),
        ("break", "a"),
        ("pull",),
    ]
)
# A post retitled after it was published, then the lock lost: pull finds its article by
# its text, and writes no second file for it.
@example(
    sequence=[
        ("new", "a", "Title one", False),
        ("publish",),
        ("retitle", "a", "Title two"),
        ("lose lock",),
        ("pull",),
    ]
)
# A post published, the lock lost, then retitled while a new post takes its old title:
# the article holds the retitled post's text, so it stays that post's; the new post's
# title alone does not take it.
@example(
    sequence=[
        ("new", "b", "Title two", False),
        ("publish",),
        ("new", "a", "Title two", False),
        ("lose lock",),
        ("retitle", "b", "Title one"),
        ("publish",),
    ]
)
def test_no_article_receives_another_posts_text(own_sandbox, chunk, sequence):
    own_sandbox.reset()
    own_sandbox.set_rate_limits(False)
    with (
        tempfile.TemporaryDirectory(prefix="identity-") as folder,
        own_sandbox.client(transport=own_sandbox.transport()) as reader,
    ):
        root = Path(folder)
        (root / "content").mkdir()
        (root / "toolkit.toml").write_text(textwrap.dedent(CONFIG).lstrip(), encoding="utf-8")
        env = {"FOREM_BASE_URL": own_sandbox.base_url, "FOREM_API_KEY": own_sandbox.demo_api_key}
        account = Account(root, own_sandbox, env, reader)
        # The articles as the last toolkit step left them: what the next one starts from,
        # unless an article was written on the website in between (None: read them).
        remote: dict[int, dict[str, Any]] | None = None
        for step in sequence:
            if step[0] not in TOOLKIT_STEPS:
                account.run(step)
                remote = None if step[0] == "website" else remote
                continue
            files_before = account.files()
            before = account.articles() if remote is None else remote
            account.lock_before = account.lock_entries()
            account.run(step)
            remote = account.articles()
            account.check(step, files_before, before, remote)
        shutil.rmtree(root / ".toolkit", ignore_errors=True)
