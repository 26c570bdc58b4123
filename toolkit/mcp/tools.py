"""The tools: each one calls the `toolkit.commands` function the CLI calls, so the two
never disagree, and returns the command's document (`toolkit.commands.results`, the one
the CLI's `--json` prints too).

`TOOLS` is the one place a tool is declared: its method on `Toolbox` and the scopes a call
needs. Adding the tool of a new command is one `ToolSpec` and one method.

Every call runs in a worker thread (the commands block on disk and network), with the
scopes checked again inside, on the bearer token of the request carrying the call (the
HTTP transport refuses a call outside that token's scopes with 403 before it gets here;
this check also covers stdio, whose scopes are given at start), its end told to the
listener. `query_run_log` over the local log runs in a process of its own instead
(`query_worker`), within `QueryLimits`, killed at its deadline or when its client leaves.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.lowlevel.server import request_ctx
from pydantic import Field

from toolkit.commands.build import build
from toolkit.commands.check import check
from toolkit.commands.export import export
from toolkit.commands.license import license_status
from toolkit.commands.logs import query
from toolkit.commands.posts import (
    PostCache,
    content_only,
    content_paths,
    list_posts,
    post_comments,
    read_post,
)
from toolkit.commands.publish import plan
from toolkit.commands.publish import publish as publish_posts
from toolkit.commands.results import to_json
from toolkit.commands.results.content import CheckJson, CommentsJson, PostListJson, PostTextJson
from toolkit.commands.results.site import BuildJson
from toolkit.commands.results.sync import PublishJson
from toolkit.config import Config
from toolkit.errors import AuthorizationError, ContentError, RunLogError, ToolkitError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.events import TOOL, McpEvent, McpListener, tell
from toolkit.site.enabled import left_to_generator, site_enabled

T = TypeVar("T")

PUBLISH_LOCK_TIMEOUT = 10.0  # seconds push_drafts waits for another toolkit run

# A path past PATH_MAX names nothing, and resolving a long one costs quadratic time: it is
# refused by the schema, before anything resolves it.
MAX_PATH = 4096
MAX_PATHS = 1000
OnePath = Annotated[str, Field(max_length=MAX_PATH)]
Paths = Annotated[
    list[OnePath],
    Field(
        max_length=MAX_PATHS,
        description="Project-relative paths of posts or folders inside the content folder "
        "(e.g. content/hello.md), as list_posts gives them; empty: every post.",
    ),
]
PostPath = Annotated[
    str,
    Field(
        max_length=MAX_PATH,
        description="Project-relative path of one post, as list_posts gives it "
        "(e.g. content/hello.md).",
    ),
]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    scopes: tuple[str, ...]  # every call needs these
    read_only: bool  # changes nothing anywhere
    open_world: bool  # talks to a remote service


TOOLS = (
    ToolSpec("list_posts", "List posts", (scope_names.READ,), True, False),
    ToolSpec("read_post", "Read a post", (scope_names.READ,), True, False),
    ToolSpec("check_posts", "Check posts", (scope_names.READ,), True, False),
    ToolSpec("plan", "Plan a publish", (scope_names.READ,), True, True),
    ToolSpec("push_drafts", "Push drafts", (scope_names.DRAFT_WRITE,), False, True),
    ToolSpec("read_comments", "Read a post's comments", (scope_names.READ,), True, False),
    ToolSpec("build_site", "Build the site", (scope_names.DRAFT_WRITE,), False, False),
    ToolSpec("licence_status", "Licence status", (scope_names.READ,), True, True),
    ToolSpec("query_run_log", "Query the run log", (scope_names.LOGS,), True, True),
    ToolSpec("export_archive", "Export an archive", (scope_names.DRAFT_WRITE,), False, True),
)
MAX_RECORDS = 500  # rows of a run-log answer given to an assistant
SPECS = {spec.name: spec for spec in TOOLS}


@dataclass(frozen=True)
class QueryLimits:
    """What one `query_run_log` call may take over the local run log: the memory of its
    DataFusion operators, its time, the rows it answers, and the size of that answer."""

    memory_bytes: int = 256 * 1024 * 1024
    seconds: float = 30.0
    rows: int = MAX_RECORDS
    answer_bytes: int = 32 * 1024 * 1024
    poll_seconds: float = 0.2  # how often the server looks whether the client is still there


class ClientLeft(Exception):
    """The client of a call went away (its HTTP connection closed) while the call ran."""


def scopes_for(tool: str, arguments: dict[str, Any]) -> tuple[str, ...]:
    """The scopes a call of `tool` with `arguments` needs (none for an unknown tool: the
    server answers that one itself)."""
    spec = SPECS.get(tool)
    if spec is None:
        return ()
    # Fail closed: anything but an explicit false (or no value) asks for publish too; a
    # value that is not a boolean is refused by the schema before it gets anywhere.
    if tool == "push_drafts" and arguments.get("publish", False) is not False:
        return (*spec.scopes, scope_names.PUBLISH)
    return spec.scopes


def _since(value: str | None) -> dt.datetime | None:
    if value is None or not value.strip():
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ContentError(f"since: {value!r} is not an ISO 8601 date or date-time") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


def toolkit_error_in(exc: BaseException) -> ToolkitError | None:
    """The one expected failure an exception group (of task groups within task groups)
    holds, else None: what a tool raised inside a task group, unwrapped."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, ToolkitError) else None


class Toolbox:
    """The tools of one server: `config` is the project, `local_scopes` what a call without
    a bearer token holds (stdio), `listener` hears every call."""

    def __init__(
        self,
        config: Config,
        listener: McpListener,
        *,
        transport: str,
        local_scopes: tuple[str, ...] = (),
    ):
        self.config = config
        self.listener = listener
        self.transport = transport
        self.local_scopes = local_scopes
        self.query_limits = QueryLimits()
        self._build_lock = threading.Lock()  # one build of the output folder at a time
        self._posts: PostCache | None = None  # made on first use

    # -- running a call -------------------------------------------------------------------

    def granted(self) -> tuple[tuple[str, ...], str | None]:
        """The scopes of this call and its client id: over HTTP, those of the bearer token
        of the request that carries this very call (never the token that opened the MCP
        session: any token of the same client may use a session); no scopes at all when
        there is none. Over stdio, the local ones."""
        if self.transport != "http":
            return self.local_scopes, None
        try:
            request = request_ctx.get().request
        except LookupError:
            request = None
        scope = getattr(request, "scope", None)
        user = scope.get("user") if isinstance(scope, dict) else None
        if not isinstance(user, AuthenticatedUser):
            return (), None
        return tuple(user.scopes), user.access_token.client_id

    async def run(self, tool: str, arguments: dict[str, Any], work: Callable[[], T]) -> T:
        """Call `work` in a worker thread, once the scopes are checked."""
        return await self.run_async(tool, arguments, lambda: anyio.to_thread.run_sync(work))

    async def run_async(
        self, tool: str, arguments: dict[str, Any], work: Callable[[], Awaitable[T]]
    ) -> T:
        granted, client_id = self.granted()
        missing = [s for s in scopes_for(tool, arguments) if s not in granted]
        started = time.perf_counter()

        def told(outcome: str, detail: str = "") -> None:
            tell(
                self.listener,
                McpEvent(
                    TOOL,
                    "call",
                    outcome,
                    client_id,
                    granted,
                    tool=tool,
                    detail=detail,
                    duration_ms=round((time.perf_counter() - started) * 1000, 3),
                    transport=self.transport,
                ),
            )

        if missing:
            message = (
                f"{tool} needs the scope {' and '.join(missing)}; this "
                f"{'token' if client_id else 'server'} holds "
                f"{' '.join(granted) or 'none'}"
            )
            told("denied", message)
            raise AuthorizationError(message)
        try:
            result = await work()
        except ClientLeft:
            told("cancelled", "the client went away; the call was stopped")
            raise RunLogError("the client went away; the call was stopped") from None
        except anyio.get_cancelled_exc_class():
            told("cancelled", "the call was cancelled")
            raise
        except ToolkitError as exc:
            told("error", exc.lines[0] if exc.lines else exc.message)
            raise
        except Exception as exc:
            expected = toolkit_error_in(exc)
            if expected is not None:  # a refusal raised inside a task group
                told("error", expected.lines[0] if expected.lines else expected.message)
                raise expected from None
            told("error", f"unexpected {type(exc).__name__}")
            raise
        ok = getattr(result, "ok", True)
        told("ok" if ok is not False else "failed")
        return result

    def post_cache(self) -> PostCache:
        """The parsed posts kept between calls (made on first use): a file is parsed again
        only once it changed."""
        if self._posts is None:
            self._posts = PostCache(self.config)
        return self._posts

    # -- the tools -----------------------------------------------------------------------

    async def list_posts(self) -> PostListJson:
        """List every post under the content folder: path, title, published flag, tags,
        date, and its sync state from toolkit.lock: new (never published), synced (what
        publish would send was sent), modified (changed since it was last sent), pending
        (an interrupted update the next publish checks), local-only (premium, never sent).
        Offline: the publishing API is not asked (`plan` asks it). Files that cannot be
        parsed are listed under problems as `path:line: message`."""
        cache = self.post_cache()
        return await self.run(
            "list_posts", {}, lambda: PostListJson.of(list_posts(self.config, cache=cache))
        )

    async def read_post(self, path: PostPath) -> PostTextJson:
        """Read one post: its front matter (dates as ISO strings), its Markdown body and
        its sync state. Only posts inside the content folder can be read."""
        return await self.run(
            "read_post", {"path": path}, lambda: PostTextJson.of(read_post(self.config, path))
        )

    async def check_posts(
        self,
        paths: Paths = [],  # noqa: B006 - a schema default, never mutated
        strict: Annotated[
            bool,
            Field(
                strict=True,
                description="Count warnings (unknown front matter keys) as failures too.",
            ),
        ] = False,
    ) -> CheckJson:
        """Validate posts offline, as `toolkit check` does: front matter, title, tags,
        dates, canonical URLs, images, and every rule the publishing API would refuse.
        Each problem comes as `path:line: message`; `ok` is false when a post has an error."""

        def work() -> CheckJson:
            return CheckJson.of(
                check(self.config, content_paths(self.config, paths), strict=strict)
            )

        return await self.run("check_posts", {"paths": paths, "strict": strict}, work)

    async def plan(self, paths: Paths = []) -> PublishJson:  # noqa: B006
        """What `toolkit publish` would do to each post, and why: create, update,
        unchanged, conflict (edited on the website since the last publish, or deleted
        there), skip (premium) or error (the post has a problem). Writes nothing. Reads the
        account's articles from the publishing API, so the server needs FOREM_API_KEY."""

        def work() -> PublishJson:
            result = plan(self.config, content_paths(self.config, paths))
            return PublishJson.of(result, published_allowed=True)

        return await self.run("plan", {"paths": paths}, work)

    async def push_drafts(
        self,
        paths: Paths = [],  # noqa: B006
        publish: Annotated[
            bool,
            Field(
                strict=True,
                description="Also send posts whose front matter says published: true, making "
                "them public, as `toolkit publish` does. Needs the publish scope; "
                "only when the writer asked for it.",
            ),
        ] = False,
    ) -> PublishJson:
        """Send posts to the publishing API as drafts: create or update the remote draft of
        each post whose front matter says published: false. A post marked published: true
        is skipped and left for the writer to publish, unless `publish` is true (and the
        token holds the publish scope). Conflicts (articles edited or deleted on the
        website) are reported, never overwritten. Holds the project's run lock while it
        writes, like `toolkit publish`; needs FOREM_API_KEY."""

        def work() -> PublishJson:
            result = publish_posts(
                self.config,
                content_paths(self.config, paths),
                drafts_only=not publish,
                lock_timeout=PUBLISH_LOCK_TIMEOUT,
            )
            return PublishJson.of(result, published_allowed=publish)

        return await self.run("push_drafts", {"paths": paths, "publish": publish}, work)

    async def read_comments(
        self,
        path: PostPath,
        since: Annotated[
            str | None,
            Field(
                max_length=64,
                description="ISO 8601 date or date-time: only "
                "comments written at or after it "
                "(UTC when no offset).",
            ),
        ] = None,
    ) -> CommentsJson:
        """The comments on one post as `toolkit mirror` last stored them in
        content/_mirror/comments/, oldest thread first, each reply after its parent, with
        author, date and text. Offline: run `toolkit mirror` (the writer does) to fetch new
        ones. A post with nothing mirrored gives an empty list and mirror_file null."""

        def work() -> CommentsJson:
            return CommentsJson.of(post_comments(self.config, path, since=_since(since)))

        return await self.run("read_comments", {"path": path, "since": since}, work)

    async def build_site(
        self,
        clean: Annotated[
            bool,
            Field(
                strict=True, description="Forget earlier builds: render and write every page again."
            ),
        ] = False,
        drafts: Annotated[
            bool,
            Field(
                strict=True, description="Include posts with published: false, marked as drafts."
            ),
        ] = False,
    ) -> BuildJson:
        """Build the static site into the project's output folder ([site] output_dir,
        site/ by default), incrementally, as `toolkit build` does. Posts with errors are
        left out and reported as `path:line: message`; `ok` is false then."""

        def work() -> BuildJson:
            if not site_enabled(self.config):  # the writer's generator builds the site
                raise ContentError(left_to_generator(self.config))
            with self._build_lock:
                report = build(
                    self.config, clean=clean, drafts=drafts, post_folders=content_only(self.config)
                )
            return BuildJson.of(report, self.config.relative(report.output_dir))

        return await self.run("build_site", {"clean": clean, "drafts": drafts}, work)

    async def licence_status(
        self,
        user: Annotated[
            str | None,
            Field(max_length=320, description="A user (email) whose own licence is asked for too."),
        ] = None,
    ) -> dict[str, Any]:
        """The customer's licence from the marketplace licensing API (and a user's), and
        whether a premium build would run now, as `toolkit license status` says."""

        def work() -> dict[str, Any]:
            document: dict[str, Any] = to_json(license_status(self.config, user=user))
            return document

        return await self.run("licence_status", {"user": user}, work)

    async def query_run_log(
        self,
        sql: Annotated[
            str,
            Field(
                max_length=65536,
                description="DataFusion SQL; the table is the stream, "
                "`toolkit` unless [logs] stream says otherwise. "
                "Fields: time, run_id, command, event, post, "
                "action, outcome, method, route, status, "
                "duration_ms, wait_ms, reason, message, ...",
            ),
        ],
        since: Annotated[
            str | None,
            Field(max_length=64, description="Only events of the last duration, e.g. 1h, 30m, 7d."),
        ] = None,
        local: Annotated[
            bool | None,
            Field(
                strict=True,
                description="Query the project's own "
                ".toolkit/events.jsonl rather than "
                "the log service; default: local "
                "when no [logs] base_url is set.",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Ask the run log a question in SQL, as `toolkit logs` does: every command the
        toolkit ran left events (each request with its route template, status and duration;
        each post's outcome; rate-limit waits; errors). For example, which posts failed in
        last night's publish, with what status, and how long it waited on rate limits.
        Answers at most 500 rows (`truncated` is true when there were more). Over the local
        log a query may hold 256 MiB and run 30 s, and stops when the client leaves."""
        use_local = self.config.logs.base_url is None if local is None else local
        limits = self.query_limits

        def shaped(answer: dict[str, Any]) -> dict[str, Any]:
            records = answer["records"]
            return {
                key: answer[key] for key in ("sql", "stream", "local", "start", "end", "fields")
            } | {"records": records[: limits.rows], "truncated": len(records) > limits.rows}

        def remote() -> dict[str, Any]:
            answer = query(self.config, sql, since=since, local=False, row_limit=limits.rows + 1)
            return shaped(to_json(answer))

        async def work() -> dict[str, Any]:
            if not use_local:
                return await anyio.to_thread.run_sync(remote)
            return shaped(await self._bounded_local_query(sql, since, limits))

        return await self.run_async(
            "query_run_log", {"sql": sql, "since": since, "local": local}, work
        )

    async def _bounded_local_query(
        self, sql: str, since: str | None, limits: QueryLimits
    ) -> dict[str, Any]:
        """The local query in its own process (`query_worker`), within `limits`: killed at
        its deadline, when the client of the call leaves, or when the call is cancelled."""
        request = json.dumps(
            {
                "config": str(self.config.path),
                "sql": sql,
                "since": since,
                "memory_limit": limits.memory_bytes,
                "row_limit": limits.rows + 1,
            }
        ).encode("utf-8")
        process = await anyio.open_process(
            [sys.executable, "-m", "toolkit.mcp.query_worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=self.config.root,
        )
        output = bytearray()
        left = anyio.Event()
        too_large = False
        try:
            assert process.stdin is not None and process.stdout is not None
            stdout = process.stdout
            with anyio.move_on_after(limits.seconds) as deadline:
                async with anyio.create_task_group() as group:
                    group.start_soon(self._watch_client, group.cancel_scope, left, limits)
                    await process.stdin.send(request)
                    await process.stdin.aclose()
                    async for chunk in stdout:
                        output += chunk
                        if len(output) > limits.answer_bytes:
                            # Said once the group is over: raised inside it, the
                            # refusal would reach the caller wrapped in an exception group.
                            too_large = True
                            break
                    else:
                        await process.wait()
                    group.cancel_scope.cancel()
            if too_large:
                raise RunLogError(
                    f"the answer is larger than {limits.answer_bytes // (1024 * 1024)} MiB: "
                    "ask for fewer or smaller columns"
                )
            if deadline.cancelled_caught:
                raise RunLogError(
                    f"the query ran longer than {limits.seconds:g} s and was "
                    f"stopped: ask for less (a time range, fewer joins)"
                )
            if left.is_set():
                raise ClientLeft()
        finally:
            if process.returncode is None:
                process.kill()
            with anyio.CancelScope(shield=True):
                await process.aclose()
        try:
            reply = json.loads(output)
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise RunLogError("the query stopped without an answer (it may have run out of memory)")
        if "error" in reply:
            raise RunLogError("\n".join(str(line) for line in reply["error"]))
        answer: dict[str, Any] = reply["answer"]
        return answer

    @staticmethod
    async def _watch_client(
        scope: anyio.CancelScope, left: anyio.Event, limits: QueryLimits
    ) -> None:
        """Cancel `scope` when the HTTP client of this call has gone away."""
        try:
            request = request_ctx.get().request
        except LookupError:
            return
        is_disconnected = getattr(request, "is_disconnected", None)
        if is_disconnected is None:
            await anyio.sleep_forever()
            return
        while not await is_disconnected():
            await anyio.sleep(limits.poll_seconds)
        left.set()
        scope.cancel()

    async def export_archive(
        self,
        source: Annotated[
            str,
            Field(
                max_length=64,
                description="site: the built site; content: the posts with their images.",
            ),
        ] = "site",
        format: Annotated[
            str | None,
            Field(
                max_length=64,
                description="zip, 7z, tar, tar.gz or tar.bz2 (default: [archive] format).",
            ),
        ] = None,
    ) -> dict[str, Any]:
        """Bundle the built site (or the posts) into one archive through the archive-task
        service, as `toolkit export` does: uploaded, archived, downloaded and verified
        before it is moved to its place ([archive] output, else site.<format> beside
        toolkit.toml). Needs CLOUDCONVERT_API_KEY."""

        def work() -> dict[str, Any]:
            result: dict[str, Any] = to_json(export(self.config, source=source, fmt=format))
            return result

        return await self.run("export_archive", {"source": source, "format": format}, work)
