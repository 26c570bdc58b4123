"""Which article a post is: `id:` (devto-cli), dev-to-git.json, renames, gone posts,
`unpublish` and `forget`, and titles that two posts share; against the real sandbox."""

from __future__ import annotations

import contextlib
import json
import shutil

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.git import git
from tests.support.sync_helpers import control, lock_entries, my_articles, writes
from toolkit.cli import main
from toolkit.errors import SyncError
from toolkit.sync.devtogit import read_map
from toolkit.sync.remote import text_of
from toolkit.sync.retire import unpublished_body
from toolkit.sync.runlock import run_lock

# No [site] url: no canonical_url is sent, so a retitled post can be found only by the
# id it names (or its lock entry), as in a writer's repository.
PLAIN_CONFIG = """
[site]
title = "Identity site"

[forem]
rate_window = 1
"""


def front(title: str, published: bool = True, tags: str = "testing") -> str:
    """A front matter as toolkit sends it (so the sandbox holds what toolkit would send)."""
    return f"---\ntitle: {title}\npublished: {'true' if published else 'false'}\ntags: {tags}\n"


def seed_articles(sandbox, bodies: list[str]) -> list[int]:
    """Articles already on the account, as an earlier tool published them."""
    articles = [{"body_markdown": body, "published": True} for body in bodies]
    return control(sandbox, "POST", "/forem/articles", username="demo", articles=articles)["ids"]


def by_id(sandbox) -> dict[int, dict]:
    return {article["id"]: article for article in my_articles(sandbox)}


def publish_json(project, env, *args: str) -> dict:
    result = project.run("publish", "--json", *args, env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def plan_json(project, env, *args: str) -> tuple[int, dict]:
    result = project.run("plan", "--json", *args, env=env)
    return result.exit_code, json.loads(result.stdout)


def adopted_posts(sandbox, count: int = 6, retitled: int = 3) -> tuple[list[int], list[str]]:
    """`count` articles on the account and the text of each post; the first `retitled`
    posts have a new title and a new paragraph since they were published (neither their
    title nor their text is their article's)."""
    bodies = [
        f"{front(f'Adopted post {i}')}---\nThe text of adopted post {i}.\n" for i in range(count)
    ]
    ids = seed_articles(sandbox, bodies)
    texts = [
        body.replace(f"title: Adopted post {i}\n", f"title: Adopted post {i}, retitled\n")
        + "\nA paragraph written since.\n"
        if i < retitled
        else body
        for i, body in enumerate(bodies)
    ]
    return ids, texts


def test_id_in_the_front_matter_binds_each_post_to_its_article(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    ids, texts = adopted_posts(sandbox)
    for i, (article_id, text) in enumerate(zip(ids, texts, strict=True)):
        # devto-cli writes the id into the front matter; it is kept there and never sent.
        with_id = text.replace("tags: testing\n", f"tags: testing\nid: {article_id}\n")
        site.write(f"content/posts/adopted-{i}.md", with_id)

    check = site.run("check")
    assert check.exit_code == 0, check.output
    assert "unknown front matter key" not in check.output

    sandbox.reset_stats()
    document = publish_json(site, env)
    assert writes(sandbox) == {"PUT 200": 3}
    assert document["summary"]["create"] == 0
    assert document["summary"]["update"] == 3 and document["summary"]["unchanged"] == 3
    updated = {p["path"] for p in document["posts"] if p["action"] == "update"}
    assert updated == {f"content/posts/adopted-{i}.md" for i in range(3)}
    remote = by_id(sandbox)
    for i, article_id in enumerate(ids):
        expected = f"Adopted post {i}, retitled" if i < 3 else f"Adopted post {i}"
        assert remote[article_id]["title"] == expected
        assert "id:" not in remote[article_id]["body_markdown"]
    entries = lock_entries(site)
    assert {key: e["article_id"] for key, e in entries.items()} == {
        f"content/posts/adopted-{i}.md": ids[i] for i in range(6)
    }


def test_dev_to_git_json_binds_each_post_to_its_article(make_project, env, sandbox):
    site = make_project(
        PLAIN_CONFIG.replace('title = "Identity site"', 'title = "x"\ncontent_dir = "blog-posts"')
    )
    ids, texts = adopted_posts(sandbox)
    mapping = []
    for i, (article_id, text) in enumerate(zip(ids, texts, strict=True)):
        site.write(f"blog-posts/adopted-{i}/adopted-{i}.md", text)
        mapping.append(
            {"id": article_id, "relativePathToArticle": f"./blog-posts/adopted-{i}/adopted-{i}.md"}
        )
    (site.root / "dev-to-git.json").write_text(json.dumps(mapping, indent=2))

    # Without the map the retitled posts would be new articles: the map is what binds them.
    moved_away = site.root / "dev-to-git.json.off"
    (site.root / "dev-to-git.json").rename(moved_away)
    code, without = plan_json(site, env)
    assert code == 0 and without["summary"]["create"] == 3
    moved_away.rename(site.root / "dev-to-git.json")

    code, planned = plan_json(site, env)
    assert code == 0, planned
    assert planned["summary"]["create"] == 0
    assert any("found by dev-to-git.json" in p["message"] for p in planned["posts"])

    sandbox.reset_stats()
    document = publish_json(site, env)
    assert writes(sandbox) == {"PUT 200": 3}
    assert document["summary"] == {**document["summary"], "create": 0, "update": 3, "unchanged": 3}
    remote = by_id(sandbox)
    assert [remote[i]["title"] for i in ids[:3]] == [
        f"Adopted post {i}, retitled" for i in range(3)
    ]
    assert json.loads((site.root / "dev-to-git.json").read_text()) == mapping  # read, never written

    sandbox.reset_stats()
    assert publish_json(site, env)["summary"]["unchanged"] == 6
    assert writes(sandbox) == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "dev-to-git.json: not valid JSON"),
        ('{"id": 1}', "dev-to-git.json: not a JSON array"),
        (
            '[{"id": "1", "relativePathToArticle": "./a.md"}]',
            "entry 1: id must be a positive integer",
        ),
        (
            '[{"id": 1, "relativePathToArticle": "../../etc/passwd"}]',
            "entry 1: relativePathToArticle must stay inside the project",
        ),
        ('[{"id": 1, "relativePathToArticle": "/etc/passwd"}]', "must stay inside the project"),
        ("[" * 100 + "]" * 100, "nested too deep"),
        (
            '[{"id": 1, "relativePathToArticle": "a.md"}, {"id": 2, "relativePathToArticle": "./a.md"}]',
            "entry 2: a.md is named twice",
        ),
    ],
)
def test_a_dev_to_git_json_toolkit_cannot_use_stops_before_any_request(
    make_project, env, sandbox, text, message
):
    site = make_project(PLAIN_CONFIG)
    site.post("a", "A post")
    (site.root / "dev-to-git.json").write_text(text)
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert message in result.output
    assert "Traceback" not in result.output
    assert writes(sandbox) == {}


def test_an_id_the_account_does_not_hold_is_an_error_naming_the_file(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.write("content/mine.md", f"{front('Mine')}id: 987654\n---\nText.\n")
    site.post("fine", "A fine post", published=True)
    code, planned = plan_json(site, env)
    assert code == 1
    (post,) = [p for p in planned["posts"] if p["path"] == "content/mine.md"]
    assert post["action"] == "error"
    assert post["problems"] == [
        "content/mine.md:5: id: names article 987654, which is not one of this account's "
        f"articles on {env['FOREM_BASE_URL']}; correct or remove it (toolkit never creates "
        "a post that names an article)"
    ]
    sandbox.reset_stats()
    result = site.run("publish", env=env)
    assert result.exit_code == 1
    assert "content/mine.md:5  id: names article 987654, which is not one" in result.output
    assert writes(sandbox) == {"POST 201": 1}  # the other post only
    assert "Mine" not in [a["title"] for a in my_articles(sandbox)]


def test_an_id_given_to_another_post_in_the_lock_is_refused(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("first", "First post")
    publish_json(site, env)
    taken = lock_entries(site)["content/first.md"]["article_id"]
    site.write("content/copy.md", f"{front('Copy', published=False)}id: {taken}\n---\nText.\n")
    code, planned = plan_json(site, env)
    assert code == 1
    (post,) = [p for p in planned["posts"] if p["path"] == "content/copy.md"]
    assert "toolkit.lock gives to content/first.md" in post["message"]


@pytest.mark.parametrize("how", ["git mv", "rename", "rename and retitle"])
def test_a_renamed_post_is_the_same_article(make_project, env, sandbox, how):
    if how == "git mv" and shutil.which("git") is None:
        pytest.skip("git is not installed")
    site = make_project(PLAIN_CONFIG)
    site.post("part-1", "Part one", "The first part.\n", published=True)
    site.post("part-2", "Part two", "The second part.\n", published=True)
    publish_json(site, env)
    article = lock_entries(site)["content/part-1.md"]["article_id"]

    old, new = site.content / "part-1.md", site.content / "docs" / "docs-1.md"
    new.parent.mkdir()
    if how == "git mv":
        git(site.root, "init", "-q")
        git(site.root, "add", "-A")
        git(site.root, "commit", "-qm", "posts")
        git(site.root, "mv", "content/part-1.md", "content/docs/docs-1.md")
    else:
        old.rename(new)
    if how == "rename and retitle":  # neither path nor title: the text says it is the same
        new.write_text(new.read_text().replace("Part one", "Docs, part one"))

    code, planned = plan_json(site, env)
    assert code == 0, planned
    (moved,) = [p for p in planned["posts"] if p["path"] == "content/docs/docs-1.md"]
    assert moved["message"].startswith("moved content/part-1.md -> content/docs/docs-1.md; ")
    assert moved["moved_from"] == "content/part-1.md"
    assert moved["action"] == ("update" if how == "rename and retitle" else "unchanged")
    assert planned["summary"]["create"] == 0 and planned["summary"]["gone"] == 0

    sandbox.reset_stats()
    publish_json(site, env)
    assert writes(sandbox) == ({"PUT 200": 1} if how == "rename and retitle" else {})
    entries = lock_entries(site)
    assert "content/part-1.md" not in entries
    assert entries["content/docs/docs-1.md"]["article_id"] == article
    assert len(my_articles(sandbox)) == len({a["id"] for a in my_articles(sandbox)})
    assert [a["id"] for a in my_articles(sandbox) if "part one" in a["title"].lower()] == [article]


def test_a_deleted_post_is_named_then_unpublished_or_forgotten(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("keep", "Kept post", published=True)
    site.post("old", "Old post", "An old post.\n", published=True)
    site.post("older", "Older post", "An older post.\n", published=True)
    publish_json(site, env)
    entries = lock_entries(site)
    old_id, older_id = (
        entries["content/old.md"]["article_id"],
        entries["content/older.md"]["article_id"],
    )
    (site.content / "old.md").unlink()
    (site.content / "older.md").unlink()

    plan = site.run("plan", env=env)
    assert plan.exit_code == 0, plan.output
    assert (
        f"content/old.md  article {old_id} stays on the website; "
        "toolkit unpublish content/old.md or forget it"
    ) in plan.output
    code, planned = plan_json(site, env)
    assert code == 0 and planned["summary"]["gone"] == 2
    sandbox.reset_stats()
    published = site.run("publish", env=env)
    assert published.exit_code == 0, published.output
    assert "toolkit unpublish content/old.md or forget it" in published.output
    assert writes(sandbox) == {}
    unpublished = site.run("unpublish", "content/old.md", "--json", env=env)
    assert unpublished.exit_code == 0, unpublished.output
    document = json.loads(unpublished.stdout)
    assert document["action"] == "unpublished" and document["article_id"] == old_id
    remote = by_id(sandbox)
    assert remote[old_id]["published"] is False  # on the sandbox: a draft, not deleted
    assert remote[older_id]["published"] is True
    assert "content/old.md" not in lock_entries(site)

    forgotten = site.run("forget", "content/older.md", env=env)
    assert forgotten.exit_code == 0, forgotten.output
    assert "toolkit.lock forgets content/older.md" in forgotten.output
    assert set(lock_entries(site)) == {"content/keep.md"}
    assert by_id(sandbox)[older_id]["published"] is True  # forget leaves the article as it is

    code, planned = plan_json(site, env)
    assert code == 0 and planned["summary"]["gone"] == 0
    assert planned["summary"]["create"] == 0


def test_unpublish_of_a_post_that_is_still_there(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    live = site.post("live", "Live post", "Live text.\n", published=True, tags=["testing"])
    publish_json(site, env)
    article = lock_entries(site)["content/live.md"]["article_id"]
    before = live.read_text()
    result = site.run("unpublish", "content/live.md", env=env)
    assert result.exit_code == 0, result.output
    assert f"article {article} is unpublished" in result.output
    assert by_id(sandbox)[article]["published"] is False
    # The file is the source of truth: it says so too, and nothing else of it changed.
    assert live.read_text() == before.replace("published: true", "published: false")
    sandbox.reset_stats()
    code, planned = plan_json(site, env)
    assert code == 0
    assert planned["posts"][0]["action"] == "unchanged", planned
    assert writes(sandbox) == {}

    again = site.run("unpublish", "content/live.md", env=env)
    assert again.exit_code == 0 and "already unpublished" in again.output


def test_unpublish_and_forget_refuse_what_they_cannot_do(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("here", "Here")
    publish_json(site, env)
    forget = site.run("forget", "content/here.md", env=env)
    assert forget.exit_code == 1 and "is still there" in forget.output
    nothing = site.run("forget", "content/nope.md", env=env)
    assert nothing.exit_code == 1 and "toolkit.lock has no entry for it" in nothing.output
    site.post("never", "Never published")
    never = site.run("unpublish", "content/never.md", env=env)
    assert never.exit_code == 1 and "never published?" in never.output
    outside = site.run("unpublish", "../elsewhere.md", env=env)
    assert outside.exit_code == 1 and "not a path in this project" in outside.output
    assert "Traceback" not in forget.output + nothing.output + never.output + outside.output


def test_two_posts_with_one_title_both_build_and_publish(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("talk", "My talk", "The talk as given.\n", published=True)
    site.post("talk-draft", "My talk", "A copy to rework.\n", published=False)
    check = site.run("check")
    assert check.exit_code == 0, check.output
    assert "warning: title: also used by content/talk-draft.md" in check.output
    build = site.run("build", "--drafts")
    assert build.exit_code == 0, build.output
    assert (site.root / "site" / "talk" / "index.html").is_file()
    assert (site.root / "site" / "talk-draft" / "index.html").is_file()

    sandbox.reset_stats()
    publish_json(site, env)
    assert writes(sandbox) == {"POST 201": 2}
    entries = lock_entries(site)
    assert (
        entries["content/talk.md"]["article_id"] != entries["content/talk-draft.md"]["article_id"]
    )

    # Without the lock, the title alone cannot tell them apart; their text does.
    lock = (site.root / "toolkit.lock").read_text()
    (site.root / "toolkit.lock").unlink()
    sandbox.reset_stats()
    publish_json(site, env)
    assert writes(sandbox) == {}
    assert (site.root / "toolkit.lock").read_text() == lock


@pytest.mark.parametrize("command", ["unpublish", "forget"])
def test_unpublish_and_forget_wait_for_the_run_lock(make_project, env, sandbox, command):
    site = make_project(PLAIN_CONFIG)
    site.post("old", "Locked out post", published=True)
    publish_json(site, env)
    article = lock_entries(site)["content/old.md"]["article_id"]
    (site.content / "old.md").unlink()
    with run_lock(site.root / ".toolkit", "publish"):
        result = site.run(command, "content/old.md", env={**env, "TOOLKIT_LOCK_TIMEOUT": "0.2"})
    assert result.exit_code == 1
    assert "another toolkit run holds .toolkit/run.lock: publish" in result.output
    assert "content/old.md" in lock_entries(site)
    assert by_id(sandbox)[article]["published"] is True
    assert site.run(command, "content/old.md", env=env).exit_code == 0
    assert "content/old.md" not in lock_entries(site)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "---\ntitle: T\npublished: true\n---\nText\n",
            "---\ntitle: T\npublished: false\n---\nText\n",
        ),
        (
            "---\r\ntitle: T\r\npublished: true\r\n---\r\nText\r\n",
            "---\r\ntitle: T\r\npublished: false\r\n---\r\nText\r\n",
        ),
        # Not a top-level key, or not in the front matter: left as it is.
        ("---\ntitle: T\nmeta:\n  published: true\n---\npublished: true\n", None),
        ("No front matter.\npublished: true\n", None),
        ("---\ntitle: T\n", None),
    ],
)
def test_unpublished_body_changes_only_the_front_matters_published(body, expected):
    assert unpublished_body(body) == (body if expected is None else expected)


@pytest.mark.parametrize(
    ("body", "text"),
    [
        ("---\ntitle: A\n---\n\nSome text.\n\n", "Some text."),
        ("---\n---\nSome text.", "Some text."),
        ("Some text.\n", "Some text."),
        ("---\ntitle: never closed\nSome text.\n", "---\ntitle: never closed\nSome text."),
    ],
)
def test_the_text_of_an_article_is_what_follows_its_front_matter(body, text):
    assert text_of(body) == text


def test_pull_knows_the_articles_dev_to_git_json_binds(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG.replace("[site]", '[site]\ncontent_dir = "blog-posts"'))
    ids, texts = adopted_posts(sandbox, count=3, retitled=3)
    mapping = []
    for i, (article_id, text) in enumerate(zip(ids, texts, strict=True)):
        site.write(f"blog-posts/adopted-{i}/adopted-{i}.md", text)
        mapping.append(
            {"id": article_id, "relativePathToArticle": f"blog-posts/adopted-{i}/adopted-{i}.md"}
        )
    (site.root / "dev-to-git.json").write_text(json.dumps(mapping))
    result = site.run("pull", env=env)
    assert result.exit_code == 0, result.output
    copies = [
        path
        for path in (site.root / "blog-posts").rglob("*.md")
        if "The text of adopted post" in path.read_text() and path.parent.name == "blog-posts"
    ]
    assert copies == []  # every seeded article of the demo account came, but none of these
    assert any((site.root / "blog-posts").glob("*.md"))


@settings(max_examples=200)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(
                    st.sampled_from(["id", "relativePathToArticle", "x"]), inner, max_size=3
                )
            ),
            max_leaves=12,
        ).map(lambda value: json.dumps(value).encode()),
    )
)
def test_any_dev_to_git_json_is_read_or_refused_in_one_line(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("devtogit")
    (root / "dev-to-git.json").write_bytes(data)
    try:
        mapped = read_map(root)
    except SyncError as exc:
        assert exc.message.startswith("dev-to-git.json: ") and "\n" not in exc.message
    else:
        for key, article_id in mapped.items():
            assert not key.startswith(("/", "../")) and "/../" not in key
            assert type(article_id) is int and article_id > 0


@pytest.mark.parametrize("kept_by", ["dev-to-git", "devto-cli"])
def test_init_then_publish_in_a_writers_repository_creates_nothing(
    make_project, env, sandbox, kept_by
):
    """A writer's existing repository on day one: `toolkit init` adopts the folder, and the
    first publish updates the three posts retitled since and creates nothing."""
    project = make_project(name="blog")
    root = project.root
    (root / "toolkit.toml").unlink()  # the writer's repository, before toolkit
    (root / "content").rmdir()
    folder = "blog-posts" if kept_by == "dev-to-git" else "articles"
    ids, texts = adopted_posts(sandbox)
    mapping = []
    for i, (article_id, text) in enumerate(zip(ids, texts, strict=True)):
        relative = f"{folder}/adopted-{i}/adopted-{i}.md" if i % 2 else f"{folder}/adopted-{i}.md"
        if kept_by == "devto-cli":
            text = text.replace("tags: testing\n", f"tags: testing\nid: {article_id}\n")
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text)
        mapping.append({"id": article_id, "relativePathToArticle": f"./{relative}"})
    if kept_by == "dev-to-git":
        (root / "dev-to-git.json").write_text(json.dumps(mapping, indent=2))
    (root / "README.md").write_text("# My posts on dev.to\n")
    (root / folder / "adopted-1" / "README.md").write_text("How to run this post's code.\n")

    with contextlib.chdir(root):
        made = CliRunner().invoke(main, ["init", "--no-workflow"], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    assert f'content_dir = "{folder}"' in (root / "toolkit.toml").read_text()

    checked = project.run("check")
    assert checked.exit_code == 0, checked.output
    held = len(my_articles(sandbox))
    sandbox.reset_stats()
    document = publish_json(project, env)
    assert document["summary"] == {**document["summary"], "create": 0, "update": 3, "unchanged": 3}
    assert writes(sandbox) == {"PUT 200": 3}
    assert len(my_articles(sandbox)) == held


def test_pull_does_not_bring_a_deleted_post_back(make_project, env, sandbox):
    site = make_project(PLAIN_CONFIG)
    site.post("keep", "Kept post", published=True)
    site.post("old", "Old post", "An old post.\n", published=True)
    publish_json(site, env)
    old_id = lock_entries(site)["content/old.md"]["article_id"]
    (site.content / "old.md").unlink()

    pulled = site.run("pull", env=env)
    assert pulled.exit_code == 0, pulled.output
    assert f"gone        content/old.md (article {old_id})" in pulled.output
    assert "toolkit unpublish content/old.md or forget it" in pulled.output
    pulled_back = [p for p in site.content.rglob("*.md") if "title: Old post" in p.read_text()]
    assert pulled_back == []  # the account's other articles are pulled, not this one
    assert "content/old.md" in lock_entries(site)  # still named by plan until dealt with
