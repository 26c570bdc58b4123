"""Interface E's endpoints: ingest, query, streams, their schemas, and the health checks.

    POST /api/v1/ingest                      X-P-Stream: <name>; a JSON object or array
    POST /api/v1/logstream/{name}            the same, into a stream that exists
    PUT  /api/v1/logstream/{name}            create a stream ("Log stream created")
    POST /api/v1/query[?fields=true]         {"query", "startTime", "endTime"}
    GET  /api/v1/logstream                   [{"name": ...}]
    GET  /api/v1/logstream/{name}/schema     {"fields": [...], "metadata": {}}
    DELETE /api/v1/logstream/{name}          "log stream <name> deleted"
    GET  /api/v1/about                       the server's version, mode and store
    GET|HEAD /api/v1/liveness, /api/v1/readiness    200, no body, no credentials

`/api/v1/ingest` creates the stream on first use; `POST /api/v1/logstream/{name}` answers
404 `Stream not found: <name>` for one that does not exist; both answer 200 with no
body. Bodies are read as actix's JSON extractor reads them: without `Content-Type:
application/json` (or another JSON type) the answer is 400 `Content type error`. A query
names its streams in its SQL only (a `streamName` field is ignored, as Parseable ignores
unknown fields), and needs both times (`missing field `startTime``). It runs DataFusion
SQL over every stream, each a table of its exact name (an unquoted name in the SQL is
folded to lower case first, so `FROM MyStream` looks for `mystream`; `FROM "MyStream"`
finds it), filtered to the time range on `p_timestamp`; its answer is an array of
records (a record leaves out its null columns unless `?sendNull=true`), or `{"fields",
"records"}` with `?fields=true`, or with `?streaming=true` newline-delimited JSON. Errors are `text/plain` with Parseable's words: 400 for
a bad body, stream name, time range or SQL (an unknown table too), 500 for a query that
fails while running. The work (Arrow conversion, Parquet, SQL) runs in a worker thread,
so the server keeps answering meanwhile.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from toolkit import sql_json
from toolkit_sandbox.interface import ErrorAnswer
from toolkit_sandbox.limits import parse_json
from toolkit_sandbox.logs import records, times
from toolkit_sandbox.logs.http import NAME, endpoint
from toolkit_sandbox.logs.records import TIME_FIELD
from toolkit_sandbox.logs.storage import LogsState, Storage, StreamGone
from toolkit_sandbox.state import SandboxState

STREAM_HEADER = "x-p-stream"
DENIED_NAMES = {
    "select",
    "from",
    "where",
    "group",
    "by",
    "order",
    "limit",
    "offset",
    "join",
    "and",
    "sql",
}
MAX_NAME = 255
ABOUT_VERSION = "v2.3.0"  # what `GET /api/v1/about` names (the sandbox's figure)
DEPLOYMENT_ID = "01HWSANDB0X000000000000000"  # a ULID, as Parseable's deployment ids
GRPC_PORT = 8001  # Parseable's default `P_GRPC_PORT`
TIME_ELAPSED = "p-time-elapsed"  # the header of a query's answer: how long it ran
STREAM_BATCH = 8192  # records a line of a streamed answer holds (DataFusion's batch size)


def valid_name(name: str) -> bool:
    try:
        check_stream_name(name)
    except ErrorAnswer:
        return False
    return True


def storage_of(request: Request) -> Storage:
    sandbox: SandboxState = request.app.state.sandbox
    state: LogsState = sandbox.of(NAME)
    return state.storage(sandbox.files(NAME))


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def check_stream_name(name: str) -> None:
    """Parseable's rules for a stream name (`validator::stream_name`), and a length."""
    if not name:
        raise ErrorAnswer(400, "Stream name cannot be empty")
    for char in name:
        if char == " ":
            raise ErrorAnswer(400, "Stream name cannot contain whitespace")
        if not (char.isalnum() or char in "-_"):
            raise ErrorAnswer(400, f"Stream name cannot contain special character: {char}")
    if name in DENIED_NAMES:
        raise ErrorAnswer(400, "SQL keyword cannot be used as stream name")
    if len(name.encode("utf-8")) > MAX_NAME:
        raise ErrorAnswer(400, "Stream name is too long")


CONTENT_TYPE_ERROR = "Content type error"


def _json_content_type(request: Request) -> bool:
    """What actix's JSON extractor accepts: `application/json`, or any `.../json` or
    `...+json` type (parameters such as `charset` aside)."""
    kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    _, _, subtype = kind.partition("/")
    return bool(subtype) and (subtype == "json" or subtype.endswith("+json"))


async def _json(request: Request) -> Any:
    if not _json_content_type(request):
        raise ErrorAnswer(400, CONTENT_TYPE_ERROR)
    try:
        return parse_json(await request.body(), int64=False)
    except ErrorAnswer:
        raise ErrorAnswer(400, "Json deserialize error: the body is not valid JSON") from None


@endpoint
async def ingest(request: Request) -> Response:
    name = request.headers.get(STREAM_HEADER)
    if name is None:
        raise ErrorAnswer(400, "Header Error: Stream name not found in header [x-p-stream]")
    check_stream_name(name)
    events = records.events_of(await _json(request))
    storage = storage_of(request)
    now = _now()
    try:
        await run_in_threadpool(storage.get_or_create(name, now).ingest, events, now)
    except StreamGone:  # deleted meanwhile: this ingest creates it again, as on first use
        await run_in_threadpool(storage.get_or_create(name, now).ingest, events, now)
    return Response(status_code=200)


@endpoint
async def post_event(request: Request) -> Response:
    """`POST /api/v1/logstream/{name}`: ingest into a stream that exists (404 otherwise)."""
    name = request.path_params["name"]
    storage = storage_of(request)
    stream = storage.get(name) if valid_name(name) else None
    if stream is None:
        raise ErrorAnswer(404, f"Stream not found: {name}")
    events = records.events_of(await _json(request))
    try:
        await run_in_threadpool(stream.ingest, events, _now())
    except StreamGone:
        raise ErrorAnswer(404, f"Stream not found: {name}") from None
    return Response(status_code=200)


@endpoint
async def delete_stream(request: Request) -> Response:
    """`DELETE /api/v1/logstream/{name}`: the stream and its files gone (Parseable's
    `logstream::delete`): 200 `log stream <name> deleted`, 404 for one that is not there."""
    name = request.path_params["name"]
    storage = storage_of(request)
    if not valid_name(name) or not await run_in_threadpool(storage.delete, name):
        raise ErrorAnswer(404, f"Stream not found: {name}")
    return PlainTextResponse(f"log stream {name} deleted")


@endpoint
async def about(request: Request) -> Response:
    """`GET /api/v1/about`: the fields of Parseable's `about` handler, for a standalone
    server on a local drive (the sandbox's data folder), with no LLM, OIDC or hot tier."""
    folder = str(storage_of(request).folder)
    return JSONResponse(
        {
            "version": ABOUT_VERSION,
            "uiVersion": "development",
            "commit": "sandbox",
            "deploymentId": DEPLOYMENT_ID,
            "updateAvailable": False,
            "latestVersion": None,
            "llmActive": False,
            "llmProvider": None,
            "oidcActive": False,
            "license": "AGPL-3.0-only",
            "mode": "Standalone",
            "staging": folder,
            "hotTier": "Disabled",
            "grpcPort": GRPC_PORT,
            "store": {"type": "Local drive", "path": folder},
            "analytics": {"clarityTag": None},
        }
    )


@endpoint
async def put_stream(request: Request) -> Response:
    """`PUT /api/v1/logstream/{name}`: create a stream; one that exists is a 400."""
    name = request.path_params["name"]
    check_stream_name(name)
    storage = storage_of(request)
    if storage.get(name) is not None:
        raise ErrorAnswer(
            400, f"Logstream {name} already exists, please create a new log stream with unique name"
        )
    storage.get_or_create(name, _now())
    return PlainTextResponse("Log stream created")


async def liveness(request: Request) -> Response:
    """Parseable's liveness probe: 200 with no body, no credentials needed."""
    return Response(status_code=200)


async def readiness(request: Request) -> Response:
    """Parseable's readiness probe (its object store answers): 200 with no body, no
    credentials needed; 503 when the streams' folder cannot be listed."""
    folder = storage_of(request).folder
    try:
        await run_in_threadpool(lambda: folder.mkdir(parents=True, exist_ok=True))
    except OSError:
        return Response(status_code=503)
    return Response(status_code=200)


def _text(body: dict[str, Any], key: str, *, required: bool) -> str | None:
    value = body.get(key)
    if value is None:
        if required:
            raise ErrorAnswer(400, f"Json deserialize error: missing field `{key}`")
        return None
    if not isinstance(value, str):
        raise ErrorAnswer(
            400, f"Json deserialize error: invalid type for `{key}`, expected a string"
        )
    return value


def _flags(request: Request) -> dict[str, bool]:
    """The query string's flags (`fields`, `sendNull`, `streaming`) as Parseable reads
    them: the whole query string as a map of booleans (`true` or `false`, nothing else),
    so that one value of another kind leaves every flag off."""
    pairs = request.query_params.multi_items()
    if any(value not in ("true", "false") for _, value in pairs):
        return {}
    return {name: value == "true" for name, value in pairs}


def elapsed(seconds: float) -> str:
    """A duration as Rust's `Debug` for `Duration` writes it (`12.5ms`, `1.000002s`): what
    Parseable's `p-time-elapsed` header carries."""
    nanos = max(int(seconds * 1e9), 0)
    for unit, size in (("s", 10**9), ("ms", 10**6), ("\u00b5s", 10**3)):
        if nanos >= size:
            whole, part = divmod(nanos, size)
            fraction = f"{part:0{len(str(size)) - 1}d}".rstrip("0")
            return f"{whole}.{fraction}{unit}" if fraction else f"{whole}{unit}"
    return f"{nanos}ns"


@endpoint
async def query(request: Request) -> Response:
    body = await _json(request)
    if not isinstance(body, dict):
        raise ErrorAnswer(400, "Json deserialize error: expected a JSON object")
    sql = _text(body, "query", required=True) or ""
    start = _text(body, "startTime", required=True) or ""
    end = _text(body, "endTime", required=True) or ""
    began = time.perf_counter()
    # Parseable reads the time range first (`query::query`), so an empty time is a
    # time range error; its own checks of emptiness come after.
    bounds = times.time_range(start, end, _now())
    if not sql.strip():
        raise ErrorAnswer(400, "Query cannot be empty")
    storage = storage_of(request)
    fields, rows = await run_in_threadpool(execute, storage, sql, bounds)
    flags = _flags(request)
    send_null = flags.get("sendNull", False) or body.get("sendNull") is True
    answer = [row if send_null else {k: v for k, v in row.items() if v is not None} for row in rows]
    headers = {TIME_ELAPSED: elapsed(time.perf_counter() - began)}
    if flags.get("streaming"):
        return _streamed(fields if flags.get("fields") else None, answer, headers)
    if flags.get("fields"):
        return JSONResponse({"fields": fields, "records": answer}, headers=headers)
    return JSONResponse(answer, headers=headers)


def _streamed(
    fields: list[str] | None, rows: list[dict[str, Any]], headers: dict[str, str]
) -> Response:
    """`?streaming=true`: newline-delimited JSON, as Parseable's `handle_streaming_query`
    writes it: `{"fields": [...]}` first with `?fields=true`, then one line per record
    batch, each a JSON array of its records."""
    items: list[Any] = [{"fields": fields}] if fields is not None else []
    items += [rows[start : start + STREAM_BATCH] for start in range(0, len(rows), STREAM_BATCH)]
    lines = [json.dumps(item, ensure_ascii=False, separators=(",", ":")) for item in items]
    return Response(
        "".join(f"{line}\n" for line in lines).encode("utf-8"),
        media_type="application/x-ndjson",
        headers=headers,
    )


def quoted(name: str) -> str:
    """A SQL identifier naming exactly `name` (no folding to lower case)."""
    return '"' + name.replace('"', '""') + '"'


def execute(
    storage: Storage, sql: str, bounds: tuple[dt.datetime, dt.datetime]
) -> tuple[list[str], list[dict[str, Any]]]:
    """Run `sql` with every stream registered as a table of its exact name."""
    from datafusion import SessionContext, SQLOptions

    context = SessionContext()
    for name in storage.names():
        stream = storage.get(name)
        if stream is not None:
            context.register_view(quoted(name), stream.frame(context, bounds))
    options = SQLOptions().with_allow_ddl(False).with_allow_dml(False).with_allow_statements(False)
    try:
        frame = context.sql_with_options(sql, options)
    except Exception as exc:  # DataFusion raises its errors as plain exceptions
        raise ErrorAnswer(400, f"Datafusion Error: {sql_json.engine_message(exc)}") from None
    try:
        table = frame.to_arrow_table()
    except Exception as exc:
        raise ErrorAnswer(
            500,
            "Execution Error: Query Execution failed due to error in "
            f"datafusion: {sql_json.engine_message(exc)}",
        ) from None
    return sql_json.records(table)


@endpoint
async def list_streams(request: Request) -> Response:
    return JSONResponse([{"name": name} for name in storage_of(request).names()])


def _field(name: str, data_type: Any) -> dict[str, Any]:
    return {
        "name": name,
        "data_type": data_type,
        "nullable": True,
        "dict_id": 0,
        "dict_is_ordered": False,
        "metadata": {},
    }


def _serde_type(kind: str) -> Any:
    """A type as arrow-rs serialises its `DataType`."""
    if records.is_list(kind):
        return {"List": _field("item", _serde_type(records.item_kind(kind)))}
    return {"Timestamp": ["Millisecond", None]} if kind == records.TIMESTAMP else kind


@endpoint
async def schema(request: Request) -> Response:
    name = request.path_params["name"]
    stream = storage_of(request).get(name) if valid_name(name) else None
    if stream is None:
        raise ErrorAnswer(404, f"Stream not found: {name}")
    fields = [_field(TIME_FIELD, _serde_type(records.TIMESTAMP))]
    fields += [_field(field, _serde_type(kind)) for field, kind in sorted(stream.fields.items())]
    return JSONResponse({"fields": fields, "metadata": {}})


routes = [
    Route("/api/v1/ingest", ingest, methods=["POST"]),
    Route("/api/v1/query", query, methods=["POST"]),
    Route("/api/v1/logstream", list_streams, methods=["GET"]),
    Route("/api/v1/logstream/{name}", post_event, methods=["POST"]),
    Route("/api/v1/logstream/{name}", put_stream, methods=["PUT"]),
    Route("/api/v1/logstream/{name}", delete_stream, methods=["DELETE"]),
    Route("/api/v1/about", about, methods=["GET"]),
    Route("/api/v1/logstream/{name}/schema", schema, methods=["GET"]),
    Route("/api/v1/liveness", liveness, methods=["GET", "HEAD"]),
    Route("/api/v1/readiness", readiness, methods=["GET", "HEAD"]),
]
