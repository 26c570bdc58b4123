"""The MCP server: the SDK's low-level server with toolkit's tools, its posts as
resources, and errors as the CLI says them.

`ToolkitMCP` is what both transports serve: stdio (`toolkit mcp`) as it is, HTTP behind
the authorization server (`http.py`). A tool that fails the way a command fails (a
`ToolkitError`) comes back as a tool error whose text is the CLI's own line, `Error:
<message>`; anything else comes back as one line naming the tool, its traceback only in
the server's log.

Each post is a resource, `toolkit://post/<project-relative path>` (`text/markdown`),
listed from the content folder at every request, so new posts appear without a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from mcp.server.fastmcp.tools import Tool
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.models import InitializationOptions
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.message import SessionMessage
from mcp.types import (
    INVALID_PARAMS,
    CallToolResult,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCRequest,
    TextContent,
    ToolAnnotations,
)
from mcp.types import Resource as McpResource
from mcp.types import ResourceTemplate as McpResourceTemplate
from mcp.types import Tool as McpTool
from pydantic import AnyUrl, BaseModel, ValidationError

from toolkit import __version__
from toolkit.commands.posts import read_post
from toolkit.config import Config
from toolkit.errors import AuthorizationError, ToolkitError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.events import McpListener
from toolkit.mcp.tools import MAX_PATH, TOOLS, Toolbox, ToolSpec, toolkit_error_in

log = logging.getLogger(__name__)

RESOURCE_PREFIX = "toolkit://post/"
INSTRUCTIONS = """\
toolkit publishes a writer's front-matter Markdown posts (in the project's content folder)
to a Forem-compatible API such as dev.to, and builds a static site from them. Posts are
named by their project-relative path (content/hello.md), as list_posts gives them; every
post is also a resource. check_posts validates offline; plan says what a publish would do;
push_drafts updates remote drafts and publishes only when explicitly asked and allowed.
"""


def resource_uri(key: str) -> str:
    return RESOURCE_PREFIX + quote(key, safe="/")


def resource_key(uri: str) -> str | None:
    parts = urlsplit(uri)
    if parts.scheme != "toolkit" or parts.netloc != "post" or parts.query or parts.fragment:
        return None
    return unquote(parts.path.lstrip("/")) or None


def error_text(exc: BaseException) -> str:
    """What a failed call says: the CLI's `Error: ...` lines for an expected failure, the
    argument problem for a call the schema refuses, one line otherwise (never a traceback)."""
    cause = exc.__cause__ if isinstance(exc, ToolError) and exc.__cause__ is not None else exc
    cause = toolkit_error_in(cause) or cause
    if isinstance(cause, ToolkitError):
        return "\n".join(f"Error: {line}" for line in cause.lines)
    if isinstance(cause, ValidationError):
        first = cause.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        return f"Error: {where}: {first['msg']}"
    if isinstance(cause, ToolError):  # the SDK's own refusal (an unknown tool)
        return f"Error: {cause}"
    return f"Error: the tool failed unexpectedly ({type(cause).__name__}); see the server's log"


def argument_problem(
    models: dict[str, type[BaseModel]], tool: object, arguments: object
) -> str | None:
    """Why the arguments of a call of `tool` do not fit its schema, validated strictly (a
    boolean is `true` or `false`, never `"true"`, 1 or "yes"); None when they fit or the
    tool is unknown (the server answers that one itself). Never quotes the value."""
    model = models.get(tool) if isinstance(tool, str) else None
    if model is None:
        return None
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return "arguments must be an object"
    try:
        model.model_validate(arguments, strict=True)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "arguments"
        return f"{where}: {first['msg']}"[:300]
    except RecursionError:
        return "arguments are nested too deep"
    return None


# Each tool as the SDK describes it (`tool_of`), made once per process.
_DESCRIBED: dict[ToolSpec, Tool] = {}


def tool_of(spec: ToolSpec, toolbox: Toolbox) -> Tool:
    """`spec`'s tool, calling `toolbox`'s method. What the SDK makes of the method (its
    arguments' model and JSON schemas, from its signature) is the same for every toolbox,
    and most of the time a server takes to start: it is made for the first server of the
    process, and each later one copies it with its own method."""
    method = getattr(toolbox, spec.name)
    described = _DESCRIBED.get(spec)
    if described is None:
        needs = " and ".join(spec.scopes)
        described = Tool.from_function(
            method,
            name=spec.name,
            title=spec.title,
            description=f"{(method.__doc__ or '').strip()}\n\nScope: {needs}.",
            annotations=ToolAnnotations(
                title=spec.title,
                readOnlyHint=spec.read_only,
                destructiveHint=False if not spec.read_only else None,
                idempotentHint=spec.read_only,
                openWorldHint=spec.open_world,
            ),
            structured_output=True,
        )
        # Kept with the class's function, not this toolbox's method: nothing holds the
        # first server's toolbox once that server is gone.
        described = _DESCRIBED[spec] = described.model_copy(
            update={"fn": getattr(Toolbox, spec.name)}
        )
    return described.model_copy(update={"fn": method})


class ToolkitMCP(Server[Any, Any]):
    """The MCP server of `config`'s project: the SDK's low-level server, named and
    versioned as toolkit, its handlers registered through the SDK's decorators.
    `local_scopes` are what a call without a bearer token holds (stdio), `listener` hears
    every tool call. `transport_security` is what its HTTP transport checks (Host, Origin).

    Every tool's arguments are validated strictly (a boolean is `true` or `false`, never
    `"true"`, 1 or "yes"), once, before the call reaches the server's dispatch: a call
    whose arguments do not fit is refused as the JSON-RPC error -32602 (invalid params).
    Over HTTP the transport's gate (`guards.ScopeGate`, `gated`) checks every message
    before the session sees it; otherwise the session checks each as it reads it (`run`).
    A tool's handler does not check them again."""

    def __init__(
        self,
        config: Config,
        listener: McpListener,
        *,
        transport: str = "stdio",
        local_scopes: tuple[str, ...] = (),
        transport_security: TransportSecuritySettings | None = None,
        gated: bool = False,
    ):
        super().__init__(name="toolkit", version=__version__, instructions=INSTRUCTIONS)
        self.config = config
        self.gated = gated  # the transport checks the arguments of every tool call itself
        self.transport_security = transport_security
        self.toolbox = Toolbox(config, listener, transport=transport, local_scopes=local_scopes)
        self.tools = {spec.name: tool_of(spec, self.toolbox) for spec in TOOLS}
        # Each tool's arguments as a model, for the strict check here or at the HTTP gate.
        self.argument_validators: dict[str, type[BaseModel]] = {
            name: tool.fn_metadata.arg_model for name, tool in self.tools.items()
        }
        self.list_tools()(self.tool_list)  # type: ignore[no-untyped-call]
        # The SDK's own check of the arguments (jsonschema) is replaced by the strict one.
        self.call_tool(validate_input=False)(self.run_tool)
        self.list_resources()(self.resource_list)  # type: ignore[no-untyped-call]
        self.list_resource_templates()(self.resource_templates)  # type: ignore[no-untyped-call]
        self.read_resource()(self.resource)  # type: ignore[no-untyped-call]

    def http_sessions(self) -> StreamableHTTPSessionManager:
        """The SDK's session manager of the streamable HTTP transport, serving this server
        (JSON answers, not event streams)."""
        return StreamableHTTPSessionManager(
            app=self, json_response=True, security_settings=self.transport_security
        )

    async def run(
        self,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
        initialization_options: InitializationOptions,
        raise_exceptions: bool = False,
        stateless: bool = False,
    ) -> None:
        """The SDK's `run`, every message read first checked here (unless the transport's
        gate checked it): a `tools/call` whose arguments do not fit its tool is answered
        with -32602 and goes no further.

        A session ends when its transport closes the streams (a client's `DELETE`, an
        `initialize` the transport refused, the server stopping): reading or answering
        then finds them closed, which ends the check as the end of the stream does, and
        the SDK's `run` after it."""
        try:
            if self.gated:
                await super().run(
                    read_stream, write_stream, initialization_options, raise_exceptions, stateless
                )
            else:
                await self._run_checked(
                    read_stream, write_stream, initialization_options, raise_exceptions, stateless
                )
        finally:
            log.debug("an MCP session ended")

    async def _run_checked(
        self,
        read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
        write_stream: MemoryObjectSendStream[SessionMessage],
        initialization_options: InitializationOptions,
        raise_exceptions: bool,
        stateless: bool,
    ) -> None:
        """The SDK's `run` over the messages `read_stream` holds that pass the check."""
        checked_send, checked = anyio.create_memory_object_stream[SessionMessage | Exception]()

        async def check() -> None:
            async with checked_send:
                try:
                    async for item in read_stream:
                        refusal = self._refusal(item)
                        if refusal is None:
                            await checked_send.send(item)
                        else:
                            await write_stream.send(refusal)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    pass  # the session ended

        async with anyio.create_task_group() as group:
            group.start_soon(check)
            await super().run(
                checked, write_stream, initialization_options, raise_exceptions, stateless
            )
            group.cancel_scope.cancel()

    def _refusal(self, item: SessionMessage | Exception) -> SessionMessage | None:
        """The -32602 answer to a `tools/call` whose arguments do not fit (None: it fits,
        or it is some other message)."""
        if isinstance(item, Exception):
            return None
        message = item.message.root
        if not isinstance(message, JSONRPCRequest) or message.method != "tools/call":
            return None
        params = message.params or {}
        problem = argument_problem(
            self.argument_validators, params.get("name"), params.get("arguments")
        )
        if problem is None:
            return None
        error = ErrorData(code=INVALID_PARAMS, message=f"Invalid params: {problem}")
        refused = JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return SessionMessage(JSONRPCMessage(refused))

    async def tool_list(self) -> list[McpTool]:
        return [
            McpTool(
                name=tool.name,
                title=tool.title,
                description=tool.description,
                inputSchema=tool.parameters,
                outputSchema=tool.output_schema,
                annotations=tool.annotations,
            )
            for tool in self.tools.values()
        ]

    async def run_tool(self, name: str, arguments: dict[str, Any]) -> CallToolResult:
        """Run tool `name` on `arguments` (already checked strictly, as the message was
        read); a failure is a tool error whose text is the CLI's own line."""
        try:
            tool = self.tools.get(name)
            if tool is None:
                raise ToolError(f"Unknown tool: {name}")
            outcome: Any = await tool.run(arguments, convert_result=True)
        except Exception as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            if not isinstance(cause, ToolkitError | ValidationError | ToolError):
                log.error("tool %s failed", name, exc_info=cause)
            return CallToolResult(
                content=[TextContent(type="text", text=error_text(exc))], isError=True
            )
        if isinstance(outcome, tuple) and len(outcome) == 2:
            # A result is a document of toolkit.commands.results, checked as it was built:
            # handed over as a CallToolResult, so that the low-level server does not check
            # it against its schema again (jsonschema, some 200 ms for a list of 1,000 posts).
            content, structured = outcome
            return CallToolResult(
                content=list(content), structuredContent=structured, isError=False
            )
        return CallToolResult(content=list(outcome), isError=False)

    # -- posts as resources -----------------------------------------------------------------

    def _resource_scope(self) -> None:
        granted, _ = self.toolbox.granted()
        if scope_names.READ not in granted:
            raise ResourceError(f"reading posts needs the scope {scope_names.READ}")

    async def resource_list(self) -> list[McpResource]:
        self._resource_scope()
        # The posts inside the content folder only, as every tool sees them (the toolbox's
        # cache: only the files that changed are parsed again).
        posts, _ = await anyio.to_thread.run_sync(self.toolbox.post_cache().load)
        return [
            McpResource(
                uri=AnyUrl(resource_uri(post.key)),
                name=post.key,
                title=post.title,
                mimeType="text/markdown",
                description=f"{'published' if post.published else 'draft'} post {post.key}",
            )
            for post in posts
        ]

    async def resource_templates(self) -> list[McpResourceTemplate]:
        return []

    async def resource(self, uri: AnyUrl | str) -> Iterable[ReadResourceContents]:
        self._resource_scope()
        key = resource_key(str(uri))
        if key is not None and len(key) > MAX_PATH:
            raise ResourceError(f"a post's path is at most {MAX_PATH} characters")
        if key is None:
            raise ResourceError(f"unknown resource {uri}: posts are {RESOURCE_PREFIX}<path>")
        try:
            document = await anyio.to_thread.run_sync(lambda: read_post(self.config, key))
        except (ToolkitError, AuthorizationError) as exc:
            raise ResourceError(exc.message) from None
        return [ReadResourceContents(content=document.source, mime_type="text/markdown")]
