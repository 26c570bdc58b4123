"""The documents toolkit writes for a machine, one tree against another: every command's
`--json`, the MCP tools' answers and the run log, on one fixed scenario, normalised only
where a value is variable by nature, then compared byte for byte.

    python .ci/documents.py run TREE OUT        # TREE's documents into the folder OUT
    python .ci/documents.py compare OLD NEW     # what differs: one diff per document

For example, the tree before a refactor against this one:

    git worktree add --detach /tmp/old 8177dcb
    .venv/bin/python .ci/documents.py run /tmp/old /tmp/documents-old
    .venv/bin/python .ci/documents.py run . /tmp/documents-new
    .venv/bin/python .ci/documents.py compare /tmp/documents-old /tmp/documents-new

`run` imports TREE's toolkit (TREE and TREE/sandbox go first on PYTHONPATH; the process
starts itself again with them when they are not) and, in a new temporary folder:

- starts TREE's own sandbox in this process, as `toolkit sandbox --memory --port 0` does
  (`toolkit.commands.sandbox.sandbox`), seeded; the random suffix Forem gives a new
  article's slug is always `-0` there (`FirstDraws`);
- writes a blog: a published post, a draft, a premium one, a broken one, posts that are
  then edited here, edited on the website, edited on both sides, deleted, renamed,
  unpublished and forgotten, and two more projects (a new one and an unlicensed one);
- runs the commands that have `--json` as subprocesses (`python -m toolkit`), each in
  cases that succeed and cases that fail, in a fixed order: stdout in OUT/cli/NN-name.json,
  the exit codes in OUT/cli/exit-codes.txt (stderr in OUT/stderr/, for reading only);
- runs one MCP session over stdio (`toolkit mcp`, JSON-RPC lines, as an assistant's
  client sends them): initialize, tools/list and each tool, every line the server wrote
  kept as it came, in OUT/mcp/NN-name.jsonl;
- keeps the run log: .toolkit/events.jsonl as one document per run, OUT/runlog/NN-command.jsonl,
  and the log service's copy through `toolkit logs` (in OUT/cli/);
- OUT/files/ holds toolkit.lock and the posts at the end, for finding a difference's
  cause (not compared).

Normalised, in OUT only (the documents as they came are in OUT/raw/), and nothing else:
- values made at random or by the machine, learned where they appear (the temporary
  folder, the sandbox's port and keys, the MCP client's id and secret, a run's id), each
  replaced by a placeholder naming it and counting in order of first appearance
  (`<run-1>`), so that two documents naming the same run still say so;
- today's date (`<today>`), date-times (`<time>`), UUIDs (`<uuid>`), and the numbers of
  keys that measure time or an archive's compressed size (`"duration_ms": "<n>"`...);
- the ids of the articles the run made: publish sends three creates at once, so the
  sandbox numbers them in the order they arrive. They are numbered 9001... by title,
  where a key (`article_id`), "article N" or an API path names them; and the lists that
  come in the account's order of articles (pull's and mirror's) are sorted by path;
- the events of a run are sorted (requests in flight together log in the order their
  answers came, and take their `seq` in that order: `seq` is `"<seq>"` when the run's
  events are numbered 0 to n-1, and kept as it is otherwise).
A placeholder where a number was is written as a JSON string, so that every normalised
document still reads as JSON.

`compare` exits 1 when a document differs or is on one side only, and prints each
difference as a unified diff of the two normalised documents, as indented JSON (a JSON
text inside an MCP answer read too).

Two runs of one tree compare equal. A run starts about 60 Python processes, one at a
time, and takes about 25 s of processor time.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import os
import queue
import random
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

PYTHON = sys.executable
TIMEOUT = 300  # seconds a command may take before the run gives up
# Keys whose numbers measure time, and the size of a compressed archive (its entries carry
# the files' times): their values are the machine's.
MEASURED_KEYS = ("duration_ms", "wait_ms", "elapsed_ms", "seconds", "size", "bytes")
SECRET_ENV = (
    "FOREM_API_KEY",
    "CLOUDCONVERT_API_KEY",
    "LICENSE_API_TOKEN",
    "LOGS_PASSWORD",
)
# Variables of the caller's shell that would point toolkit elsewhere.
DROPPED_ENV = re.compile(r"^(FOREM_|CLOUDCONVERT_|LICENSE_|LOGS_|GITHUB_|TOOLKIT_|PYTHON)")


# --- normalisation ----------------------------------------------------------------------

# A JSON key as written in a document, or in a JSON text inside an MCP answer's string.
KEY = r'\\?"(?:{})\\?"\s*:\s*'
TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:Z|[+-]\d\d:?\d\d)?(?!\d)")
UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
MEASURED = re.compile(
    "(" + KEY.format("|".join(MEASURED_KEYS)) + r")(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
)
SEQ = re.compile(r'"seq":\d+')
RUN_ID = re.compile(KEY.format("run_id") + r'\\?"([^"\\]+)')
# Where an article's id is written: a key, "article N", a path of the API.
ARTICLE_ID = re.compile("(" + KEY.format("article_id") + r"|\barticle |/articles/)(\d+)\b")


class Normaliser:
    """The rules above, with the values learned so far."""

    def __init__(self) -> None:
        self.exact: dict[str, str] = {}  # value -> placeholder, longest first when applied
        self.counts: dict[str, int] = {}
        self.articles: dict[int, int] = {}  # id the sandbox gave -> its number here

    def learn(self, value: str | None, name: str, *, numbered: bool = False) -> None:
        if not value or value in self.exact:
            return
        if numbered:
            self.counts[name] = self.counts.get(name, 0) + 1
            name = f"{name}-{self.counts[name]}"
        self.exact[value] = f"<{name}>"

    def __call__(self, text: str) -> str:
        for match in RUN_ID.finditer(text):
            self.learn(match.group(1), "run", numbered=True)
        for value in sorted(self.exact, key=len, reverse=True):
            text = text.replace(value, self.exact[value])
        text = ARTICLE_ID.sub(self._article, text)
        text = MEASURED.sub(quoted("<n>"), text)
        text = UUID.sub("<uuid>", text)
        text = TIME.sub("<time>", text)
        for today in {dt.date.today().isoformat(), dt.datetime.now(dt.UTC).date().isoformat()}:
            text = text.replace(today, "<today>")
        return text

    def _article(self, match: re.Match[str]) -> str:
        number = self.articles.get(int(match.group(2)))
        return match.group(0) if number is None else f"{match.group(1)}{number}"


def quoted(placeholder: str) -> Callable[[re.Match[str]], str]:
    """Replaces a number after its key with a placeholder, as a JSON string (escaped as the
    key is: a document in an MCP answer's text is a JSON string), so that a normalised
    document still reads as JSON."""

    def replace(match: re.Match[str]) -> str:
        quote = '\\"' if match.group(1).startswith("\\") else '"'
        return f"{match.group(1)}{quote}{placeholder}{quote}"

    return replace


# --- the tree -----------------------------------------------------------------------------


def use_tree(tree: Path) -> None:
    """Make `import toolkit` load TREE's: start this process again with TREE (and its
    sandbox's distribution folder, where it has one) first on PYTHONPATH."""
    wanted = [str(tree), str(tree / "sandbox")]
    current = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if current[: len(wanted)] != wanted:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(wanted))
        os.execve(PYTHON, [PYTHON, *sys.argv], env)
    import toolkit

    if not Path(toolkit.__file__).resolve().is_relative_to(tree):
        raise SystemExit(f"toolkit comes from {toolkit.__file__}, not from {tree}")


class FirstDraws(random.Random):
    """A random source whose draws are all 0: Forem gives a new article's slug a random
    suffix, and publish sends three creates at once, so which article drew which number
    is the order they arrived in. With it every slug ends in `-0`."""

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        return 0


@contextlib.contextmanager
def running_sandbox() -> Iterator[Any]:
    from toolkit.commands.sandbox import sandbox

    running = sandbox(port=0, db_path=None)
    try:
        state = running.server.state
        assert state is not None  # a started sandbox has its state
        state.of("forem").rng = FirstDraws()
        yield running
    finally:
        running.stop()


# --- the scenario ---------------------------------------------------------------------------


def post(title: str, body: str, **front: Any) -> str:
    lines = [f"title: {json.dumps(title)}"]
    for key, value in front.items():
        lines.append(f"{key}: {json.dumps(value)}")
    return "---\n" + "\n".join(lines) + "\n---\n" + textwrap.dedent(body).lstrip("\n")


CONFIG = """\
[site]
title = "Documents"
url = "https://example.com/blog"

[license]
application_id = "812345678901"
customer_id = "acme.example"
"""

POSTS = {
    "kept": post(
        "Kept as it is",
        "Published once, never changed.\n\n## A heading\n\nText.\n",
        published=True,
        tags="python, tooling",
        date="2024-03-01",
        description="A post that stays.",
    ),
    "draft": post("A draft", "Not yet.\n", published=False, date="2024-03-02"),
    "edited": post("Edited here", "First version.\n", published=True, date="2024-03-03"),
    "deleted": post("Deleted here", "Its file goes.\n", published=True, date="2024-03-04"),
    "forgotten": post("Forgotten", "Its file goes, its lock entry too.\n", published=True),
    "retired": post("Retired", "Unpublished on purpose.\n", published=True, date="2024-03-05"),
    "website": post("Edited on the website", "Line one.\n\nLine two.\n", published=True),
    "moved": post("Moved away", "Renamed after it was published.\n", published=True),
    "both": post("Changed on both sides", "One.\n\nTwo.\n\nThree.\n", published=True),
    "premium": post("For subscribers", "Premium text.\n", published=True, premium=True),
    "broken": post("", "No title.\n", published=True),
}


class Run:
    """One tree's run of the scenario, writing OUT."""

    def __init__(self, tree: Path, out: Path, work: Path, sandbox: Any) -> None:
        self.tree = tree
        self.out = out
        self.work = work
        self.blog = work / "blog"
        self.sandbox = sandbox
        self.norm = Normaliser()
        self.step = 0
        self.exits: list[str] = []
        # folder, name, raw text, and how its order is made stable: in the order made
        self.saved: list[tuple[str, str, str, Callable[[str], str]]] = []
        self.env = {k: v for k, v in os.environ.items() if not DROPPED_ENV.match(k)}
        self.env.update(
            PYTHONPATH=os.pathsep.join([str(tree), str(tree / "sandbox")]),
            TZ="UTC",
            NO_COLOR="1",
            COLUMNS="120",
            LC_ALL="C.UTF-8",
        )
        for _interface, variables in sandbox.environment():
            self.env.update(variables)
            for name, value in variables.items():
                if name in SECRET_ENV:
                    self.norm.learn(value, name.lower())
        port = sandbox.base_url.rsplit(":", 1)[1]
        self.norm.learn(f"127.0.0.1:{port}", "sandbox")
        self.norm.learn(f"localhost:{port}", "sandbox")
        for account in sandbox.accounts:
            self.norm.learn(account["api_key"], f"{account['username']}-key")
        self.norm.learn(str(work.resolve()), "tmp")
        self.norm.learn(str(work), "tmp")
        self.seeded = {article["id"] for article in self.articles()}

    # -- saving

    def save(self, folder: str, name: str, raw: str, ordered: Callable[[str], str] = str) -> None:
        """Keep a document; it is normalised once the run is over (`finish`), when the
        articles it names are all known, and then given to `ordered`."""
        self.saved.append((folder, name, raw, ordered))

    def articles(self) -> list[dict[str, Any]]:
        """The demo account's articles, as the publishing API lists them."""
        answer = httpx.get(
            f"{self.sandbox.base_url}/api/articles/me/all",
            params={"per_page": 1000},
            headers={"api-key": self.sandbox.demo_api_key},
            timeout=30,
        )
        answer.raise_for_status()
        listed: list[dict[str, Any]] = answer.json()
        return listed

    def finish(self) -> None:
        """Number the articles the run made by their titles (the sandbox numbers them in
        the order their creates arrived), then write every document normalised, in the
        order they were made, and the raw ones beside them."""
        made = [a for a in self.articles() if a["id"] not in self.seeded]
        for number, article in enumerate(sorted(made, key=lambda a: (a["title"], a["id"]))):
            self.norm.articles[article["id"]] = 9001 + number
        for folder in ("cli", "mcp", "runlog", "raw", "stderr", "files"):
            (self.out / folder).mkdir(parents=True, exist_ok=True)
        for folder, name, raw, ordered in self.saved:
            (self.out / "raw" / f"{folder}-{name}").write_text(raw, encoding="utf-8")
            (self.out / folder / name).write_text(ordered(self.norm(raw)), encoding="utf-8")

    def toolkit(
        self, name: str, *args: str, cwd: Path | None = None, without: tuple[str, ...] = ()
    ) -> str:
        """`toolkit ARGS` in the blog (or `cwd`), with the variables `without` unset: its
        stdout saved as a document."""
        self.step += 1
        label = f"{self.step:02d}-{name}"
        done = subprocess.run(
            [PYTHON, "-m", "toolkit", *args],
            cwd=cwd or self.blog,
            env={k: v for k, v in self.env.items() if k not in without},
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        self.exits.append(f"{label}: toolkit {' '.join(args)} -> {done.returncode}")
        # pull and mirror list posts in the order of the account's articles, which is the
        # order their creates arrived in (see FirstDraws).
        ordered = by_path if args[0] in ("pull", "mirror") else str
        self.save("cli", f"{label}.json", done.stdout, ordered)
        self.save("stderr", f"{label}.txt", done.stderr)
        return done.stdout

    def write(self, relative: str, text: str) -> None:
        path = self.blog / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")

    def article_id(self, relative: str) -> int:
        lock = json.loads((self.blog / "toolkit.lock").read_text(encoding="utf-8"))
        found = find_article_id(lock, relative)
        if found is None:
            raise SystemExit(f"toolkit.lock names no article for {relative}")
        return found

    # -- the scenario

    def scenario(self) -> None:
        fresh = self.work / "fresh"
        fresh.mkdir()
        self.toolkit("init-new", "init", "--json", cwd=fresh)
        adopt = self.work / "adopt"
        (adopt / "posts").mkdir(parents=True)
        (adopt / "posts" / "old.md").write_text(post("Old", "Text.\n", published=True))
        self.toolkit("init-adopt", "init", "--no-workflow", "--json", cwd=adopt)
        unlicensed = self.work / "unlicensed"
        (unlicensed / "content").mkdir(parents=True)
        (unlicensed / "toolkit.toml").write_text(
            CONFIG.replace("acme.example", "initech.example"), "utf-8"
        )
        (unlicensed / "content" / "extra.md").write_text(
            post("Extra", "For subscribers.\n", published=True, premium=True), "utf-8"
        )
        self.toolkit("license-unlicensed", "license", "--json", cwd=unlicensed)
        self.toolkit("build-premium-refused", "build", "--premium", "--json", cwd=unlicensed)

        self.blog.mkdir()
        self.write("toolkit.toml", CONFIG)
        for name, text in POSTS.items():
            self.write(f"content/{name}.md", text)
        self.toolkit("new", "new", "Fresh idea", "--tags", "python,ideas", "--json")
        self.toolkit("check", "check", "--json")
        self.toolkit("check-one", "check", "content/kept.md", "--strict", "--json")
        self.toolkit("check-missing", "check", "content/nothing.md", "--json")
        self.toolkit("new-taken", "new", "Fresh idea", "--json")
        self.toolkit("config", "config", "--json")
        self.toolkit("build", "build", "--json")
        self.toolkit("build-again", "build", "--json")
        self.toolkit("build-premium", "build", "--premium", "--json")
        self.toolkit("plan-no-key", "plan", "--json", without=("FOREM_API_KEY",))
        self.toolkit("plan-first", "plan", "--json")
        self.toolkit("publish-first", "publish", "--json")
        self.toolkit("publish-unchanged", "publish", "content/kept.md", "--json")

        # What a writer and the website do between two publishes.
        self.write("content/edited.md", POSTS["edited"].replace("First", "Second"))
        (self.blog / "content/deleted.md").unlink()
        (self.blog / "content/forgotten.md").unlink()
        (self.blog / "content/moved.md").rename(self.blog / "content/moved-here.md")
        self.write("content/late.md", post("Late", "Written after.\n", published=True))
        self.write("content/both.md", POSTS["both"].replace("One.", "One, here."))
        self.sandbox.server.control(
            "POST",
            f"/forem/articles/{self.article_id('content/both.md')}/edit",
            {"body_markdown": "One.\n\nTwo.\n\nThree, there.\n"},
        )
        self.sandbox.server.control(
            "POST",
            f"/forem/articles/{self.article_id('content/website.md')}/edit",
            {"body_markdown": "Line one.\n\nLine two, as the website has it.\n"},
        )
        self.sandbox.server.control(
            "POST",
            "/forem/comments",
            {"article_id": self.article_id("content/kept.md"), "body_markdown": "Nice post."},
        )

        self.toolkit("plan-second", "plan", "--json")
        self.toolkit("plan-one", "plan", "content/edited.md", "--json")
        self.toolkit("diff-kept", "diff", "content/kept.md", "--json")
        self.toolkit("diff-edited", "diff", "content/edited.md", "--json")
        self.toolkit("diff-website", "diff", "content/website.md", "--json")
        self.toolkit("diff-late", "diff", "content/late.md", "--json")
        self.toolkit("diff-missing", "diff", "content/nothing.md", "--json")
        self.toolkit("diff-both", "diff", "content/both.md", "--json")
        self.toolkit("pull-dry", "pull", "--dry-run", "--json")
        self.toolkit("pull", "pull", "--json")
        self.toolkit("pull-again", "pull", "--json")
        self.toolkit("pull-merge-dry", "pull", "--merge", "--dry-run", "--json")
        self.toolkit("publish-second", "publish", "--json")
        self.toolkit("publish-force", "publish", "content/both.md", "--force", "--json")
        self.toolkit("unpublish", "unpublish", "content/retired.md", "--json")
        self.toolkit("unpublish-gone", "unpublish", "content/deleted.md", "--json")
        self.toolkit("unpublish-missing", "unpublish", "content/nothing.md", "--json")
        self.toolkit("forget", "forget", "content/forgotten.md", "--json")
        self.toolkit("forget-refused", "forget", "content/kept.md", "--json")
        self.toolkit("mirror", "mirror", "--json")
        self.toolkit("mirror-again", "mirror", "--json")
        self.toolkit("license", "license", "--json")
        self.toolkit("license-user", "license", "status", "--user", "ana@acme.example", "--json")
        self.toolkit(
            "license-unlicensed-user", "license", "status", "--user", "ben@acme.example", "--json"
        )
        self.toolkit("license-notifications", "license", "notifications", "--json")
        self.toolkit("license-notifications-new", "license", "notifications", "--json")
        self.toolkit("export-site", "export", "--json")
        self.toolkit(
            "export-content", "export", "--source", "content", "--format", "tar.gz", "--json"
        )
        added = self.toolkit("mcp-add-client", "mcp", "add-client", "assistant", "--json")
        client_id = ""
        with contextlib.suppress(ValueError):
            client_id = learn_client(self.norm, json.loads(added))
        self.toolkit("mcp-clients", "mcp", "clients", "--json")
        self.toolkit("mcp-revoke", "mcp", "revoke", client_id, "--json")
        self.toolkit("mcp-clients-after", "mcp", "clients", "--json")

        self.write(
            "content/from-assistant.md", post("From the assistant", "Drafted.\n", published=False)
        )
        self.mcp_session()

        self.toolkit("plan-last", "plan", "--json")
        for name, sql in QUERIES.items():
            self.toolkit(f"logs-local-{name}", "logs", "--local", "--json", sql)
        for name, sql in QUERIES.items():
            self.toolkit(f"logs-service-{name}", "logs", "--json", sql)
        self.toolkit("logs-refused", "logs", "--local", "--json", "SELECT nothing FROM toolkit")
        self.save("cli", "exit-codes.txt", "\n".join(self.exits) + "\n")
        self.save_runlog()
        self.save_files()
        self.finish()

    def mcp_session(self) -> None:
        scopes = ("read", "draft-write", "publish", "logs")
        args = [a for scope in scopes for a in ("--scope", scope)]
        per_command, every_field = QUERIES["per-command"], QUERIES["every-field"]
        calls: list[tuple[str, str, dict[str, Any]]] = [
            ("tools-list", "tools/list", {}),
            call("list_posts"),
            call("read_post", path="content/kept.md"),
            call("read_post", "outside", path="../toolkit.toml"),
            call("check_posts"),
            call("check_posts", "strict", paths=["content/kept.md"], strict=True),
            call("plan"),
            call("push_drafts"),
            call("push_drafts", "publish", paths=["content/kept.md"], publish=True),
            call("read_comments", path="content/kept.md"),
            call("build_site"),
            call("licence_status", user="ana@acme.example"),
            call("query_run_log", "local", sql=per_command, local=True),
            call("query_run_log", "service", sql=per_command, local=False),
            call("query_run_log", "every-field", sql=every_field, local=True),
            call("export_archive", source="content"),
            call("no_such_tool"),
            call("check_posts", "bad-arguments", strict="yes"),
        ]
        with McpClient([PYTHON, "-m", "toolkit", "mcp", *args], self.blog, self.env) as client:
            lines = client.request(
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "documents", "version": "1"},
                },
            )
            self.save("mcp", "00-initialize.jsonl", lines)
            client.notify("notifications/initialized")
            for number, (name, method, params) in enumerate(calls, start=1):
                self.save("mcp", f"{number:02d}-{name}.jsonl", client.request(method, params))
        self.save("stderr", "mcp.txt", client.stderr)

    def save_runlog(self) -> None:
        """One document per run: its events, each line as written, sorted by their text
        (the events of requests sent at once are written in the order the answers came,
        and take their `seq` in that order: a run's `seq` is `<seq>` when it numbers its
        events 0 to n-1, and left as it is otherwise)."""
        folder = self.blog / ".toolkit"
        names = sorted(folder.glob("events*.jsonl"), key=generation, reverse=True)
        runs: dict[str, list[str]] = {}
        for name in names:
            for line in name.read_text("utf-8").splitlines():
                event = json.loads(line)
                runs.setdefault(event["run_id"], []).append(line)
        for number, lines in enumerate(runs.values(), start=1):
            command = json.loads(lines[0]).get("command", "run")
            numbers = sorted(json.loads(line).get("seq", -1) for line in lines)
            if numbers == list(range(len(lines))):
                lines = [SEQ.sub('"seq":"<seq>"', line) for line in lines]
            text = "".join(f"{line}\n" for line in lines)
            self.save("runlog", f"{number:02d}-{command}.jsonl", text, sorted_lines)

    def save_files(self) -> None:
        for path in sorted([self.blog / "toolkit.lock", *(self.blog / "content").rglob("*")]):
            if path.is_file():
                name = str(path.relative_to(self.blog)).replace("/", "__")
                self.save("files", name, path.read_text("utf-8", errors="replace"))


QUERIES = {
    "per-command": (
        "SELECT command, event, action, outcome, COUNT(*) AS n FROM toolkit "
        "GROUP BY command, event, action, outcome ORDER BY command, event, action, outcome"
    ),
    "posts": (
        "SELECT command, post, action, outcome, message FROM toolkit WHERE event = 'post' "
        "ORDER BY command, post, action, outcome, message"
    ),
    # Every field the table has, on the events of the runs of one command.
    "every-field": "SELECT * FROM toolkit WHERE command = 'check' ORDER BY time, seq",
}


def sorted_lines(text: str) -> str:
    return "".join(f"{line}\n" for line in sorted(text.splitlines()))


def by_path(text: str) -> str:
    """A JSON document (indented by 2, as the CLI prints it) with each list of objects
    that all have a `path` sorted by it; the document as it is when it does not read back
    into the same bytes."""
    try:
        document = json.loads(text)
    except ValueError:
        return text

    def sort(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: sort(item) for key, item in value.items()}
        if isinstance(value, list):
            items = [sort(item) for item in value]
            if items and all(isinstance(i, dict) and isinstance(i.get("path"), str) for i in items):
                items.sort(key=lambda item: item["path"])
            return items
        return value

    def written(value: Any) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    return written(sort(document)) if written(document) == text else text


def call(tool: str, case: str = "", **arguments: Any) -> tuple[str, str, dict[str, Any]]:
    """A tools/call of `tool` with `arguments`, named `tool-case` in OUT/mcp/."""
    name = f"{tool}-{case}" if case else tool
    return name, "tools/call", {"name": tool, "arguments": arguments}


def find_article_id(lock: Any, relative: str) -> int | None:
    """The article id toolkit.lock keeps for `relative`, whatever the lock's layout."""
    if isinstance(lock, dict):
        for key, value in lock.items():
            if key == relative and isinstance(value, dict):
                found = value.get("id", value.get("article_id"))
                if isinstance(found, int):
                    return found
            inner = find_article_id(value, relative)
            if inner is not None:
                return inner
    return None


def learn_client(norm: Normaliser, document: Any) -> str:
    """Learns the id and the secret of the client `mcp add-client` made; its id."""
    found = ""
    if isinstance(document, dict):
        for key, value in document.items():
            if key in ("client_id", "id") and isinstance(value, str):
                norm.learn(value, "mcp-client", numbered=True)
                found = found or value
            elif key in ("client_secret", "secret") and isinstance(value, str):
                norm.learn(value, "mcp-secret", numbered=True)
            else:
                found = found or learn_client(norm, value)
    return found


def generation(path: Path) -> int:
    """events.jsonl is 0, events.N.jsonl is N (older)."""
    middle = path.name.removeprefix("events").removesuffix(".jsonl").strip(".")
    return int(middle) if middle.isdigit() else 0


class McpClient:
    """JSON-RPC over a server's stdin and stdout, a line each way, as the MCP stdio
    transport is: each request's answer and whatever the server wrote before it."""

    def __init__(self, command: list[str], cwd: Path, env: dict[str, str]) -> None:
        self.command, self.cwd, self.env = command, cwd, env
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.next_id = 0
        self.stderr = ""

    def __enter__(self) -> McpClient:
        self.process = subprocess.Popen(
            self.command,
            cwd=self.cwd,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()
        return self

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def notify(self, method: str) -> None:
        self.send({"jsonrpc": "2.0", "method": method})

    def request(self, method: str, params: dict[str, Any]) -> str:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        got: list[str] = []
        while True:
            line = self.lines.get(timeout=TIMEOUT)
            if line is None:
                raise SystemExit(f"the MCP server ended before answering {method}")
            got.append(line)
            with contextlib.suppress(ValueError):
                if json.loads(line).get("id") == self.next_id:
                    return "".join(got)

    def __exit__(self, *exc: object) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        while self.lines.get(timeout=TIMEOUT) is not None:  # stdout read to its end
            pass


def run(tree: Path, out: Path) -> None:
    use_tree(tree)
    if out.exists():
        shutil.rmtree(out)
    with tempfile.TemporaryDirectory(prefix="toolkit-documents-") as work:
        with running_sandbox() as sandbox:
            Run(tree, out, Path(work), sandbox).scenario()
    counts = {
        folder: sum(1 for p in (out / folder).iterdir() if p.is_file())
        for folder in ("cli", "mcp", "runlog")
    }
    print(f"{out}: " + ", ".join(f"{n} {folder}" for folder, n in counts.items()))


# --- comparing ------------------------------------------------------------------------------


COMPARED = ("cli", "mcp", "runlog")


def documents(out: Path) -> dict[str, Path]:
    return {
        f"{folder}/{p.name}": p
        for folder in COMPARED
        for p in sorted((out / folder).iterdir())
        if p.is_file()
    }


def readable(text: str) -> list[str]:
    """A document's lines for a diff: the whole text, or each of its lines, as indented
    JSON, with a string that holds a JSON document (an MCP answer's text) read too."""

    def opened(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: opened(item) for key, item in value.items()}
        if isinstance(value, list):
            return [opened(item) for item in value]
        if isinstance(value, str) and value[:1] in ("{", "["):
            with contextlib.suppress(ValueError):
                return {"(JSON text)": opened(json.loads(value))}
        return value

    def lines(value: Any) -> list[str]:
        return json.dumps(opened(value), indent=2, ensure_ascii=False).splitlines()

    with contextlib.suppress(ValueError):
        return lines(json.loads(text))
    out: list[str] = []
    for line in text.splitlines():
        try:
            out.extend(lines(json.loads(line)))
        except ValueError:
            out.append(line)
    return out


def compare(old: Path, new: Path, write: Callable[[str], object] = print) -> int:
    a, b = documents(old), documents(new)
    differ = 0
    for name in sorted(a.keys() | b.keys()):
        if name not in a or name not in b:
            write(f"== {name}: only in {new if name in b else old}")
            differ += 1
            continue
        left, right = a[name].read_bytes(), b[name].read_bytes()
        if left == right:
            continue
        differ += 1
        l_text, r_text = left.decode("utf-8"), right.decode("utf-8")
        lines = list(
            difflib.unified_diff(
                readable(l_text), readable(r_text), f"{old}/{name}", f"{new}/{name}", lineterm=""
            )
        )
        if not lines:  # the same JSON, written otherwise
            lines = list(
                difflib.unified_diff(
                    l_text.splitlines(), r_text.splitlines(), "old bytes", "new bytes", lineterm=""
                )
            )
        write(f"== {name}")
        for line in lines:
            write(line)
    write(f"{len(a.keys() | b.keys())} documents, {differ} differ")
    return 1 if differ else 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "run":
        run(Path(argv[1]).resolve(), Path(argv[2]).resolve())
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
