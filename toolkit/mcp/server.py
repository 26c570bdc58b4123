"""The MCP server: FastMCP with toolkit's tools, its posts as resources, and errors as the
CLI says them.

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
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import McpError
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequest,
    CallToolResult,
    ContentBlock,
    ErrorData,
    ServerResult,
    TextContent,
    ToolAnnotations,
)
from mcp.types import Resource as McpResource
from mcp.types import ResourceTemplate as McpResourceTemplate
from pydantic import AnyUrl, BaseModel, ValidationError

from toolkit import __version__
from toolkit.config import Config
from toolkit.errors import AuthorizationError, ToolkitError
from toolkit.mcp import scopes as scope_names
from toolkit.mcp.events import McpListener
from toolkit.mcp.tools import MAX_PATH, TOOLS, Toolbox, toolkit_error_in

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


class ToolkitMCP(FastMCP[Any]):
    """FastMCP serving `config`'s project; `local_scopes` are what a call without a bearer
    token holds (stdio), `listener` hears every tool call."""

    def __init__(
        self,
        config: Config,
        listener: McpListener,
        *,
        transport: str = "stdio",
        local_scopes: tuple[str, ...] = (),
        transport_security: TransportSecuritySettings | None = None,
    ):
        super().__init__(
            name="toolkit",
            instructions=INSTRUCTIONS,
            transport_security=transport_security,
            json_response=True,
            log_level="WARNING",
            warn_on_duplicate_tools=False,
        )
        # serverInfo.version: toolkit's, not the SDK's (FastMCP takes no version).
        self._mcp_server.version = __version__
        self.config = config
        self.toolbox = Toolbox(config, listener, transport=transport, local_scopes=local_scopes)
        for spec in TOOLS:
            method = getattr(self.toolbox, spec.name)
            needs = " and ".join(spec.scopes)
            self.add_tool(
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
        self.argument_validators: dict[str, type[BaseModel]] = {}
        for spec in TOOLS:
            tool = self._tool_manager.get_tool(spec.name)
            assert tool is not None  # added just above
            self.argument_validators[spec.name] = tool.fn_metadata.arg_model
        self._strict_arguments()

    def _strict_arguments(self) -> None:
        """Check every call's arguments against its tool's schema before anything else:
        a call that does not fit is a JSON-RPC error -32602 (invalid params), not a call.
        FastMCP itself validates leniently (pydantic's lax mode takes "yes" for true)."""
        handlers = self._mcp_server.request_handlers
        sdk: Callable[[Any], Awaitable[ServerResult]] | None = handlers.get(CallToolRequest)
        if sdk is None:
            raise RuntimeError(
                "the MCP SDK no longer registers tools/call this way; "
                "toolkit.mcp.server needs updating"
            )
        validators = self.argument_validators

        async def strict(request: CallToolRequest) -> ServerResult:
            problem = argument_problem(validators, request.params.name, request.params.arguments)
            if problem is not None:
                raise McpError(ErrorData(code=INVALID_PARAMS, message=f"Invalid params: {problem}"))
            assert sdk is not None
            return await sdk(request)

        handlers[CallToolRequest] = strict

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> Sequence[ContentBlock] | dict[str, Any]:
        try:
            result = await super().call_tool(name, arguments)
        except Exception as exc:
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            if not isinstance(cause, ToolkitError | ValidationError | ToolError):
                log.error("tool %s failed", name, exc_info=cause)
            failed = CallToolResult(
                content=[TextContent(type="text", text=error_text(exc))], isError=True
            )
            # The low-level server passes a CallToolResult through as it is.
            return failed  # type: ignore[return-value]
        outcome: Any = result  # FastMCP's annotation leaves out the (content, structured) pair
        if isinstance(outcome, tuple) and len(outcome) == 2:
            # A result is a document of toolkit.commands.results, checked as it was built:
            # handed over as a CallToolResult, so that the low-level server does not check
            # it against its schema again (jsonschema, some 200 ms for a list of 1,000 posts).
            content, structured = outcome
            done = CallToolResult(
                content=list(content), structuredContent=structured, isError=False
            )
            return done  # type: ignore[return-value]
        return result

    # -- posts as resources -----------------------------------------------------------------

    def _resource_scope(self) -> None:
        granted, _ = self.toolbox.granted()
        if scope_names.READ not in granted:
            raise ResourceError(f"reading posts needs the scope {scope_names.READ}")

    async def list_resources(self) -> list[McpResource]:
        import anyio.to_thread

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

    async def list_resource_templates(self) -> list[McpResourceTemplate]:
        return []

    async def read_resource(self, uri: AnyUrl | str) -> Iterable[ReadResourceContents]:
        import anyio.to_thread

        from toolkit.commands.posts import read_post

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
