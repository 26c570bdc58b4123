"""The seam: an interface is one folder and one line in the composition. A throwaway
interface defined here is composed with Forem and served, recorded, faulted and reset by
the generic layers; ownership by prefix; a path nobody owns gets the neutral 404."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolkit import USER_AGENT
from toolkit.tls import shared_context
from toolkit_sandbox.app import Ownership, default_interfaces
from toolkit_sandbox.interface import Call, Context, Endpoints, ErrorAnswer, Interface, noted


def tiny_error(status: int, message: str | None) -> Response:
    return JSONResponse({"problem": message or "tiny trouble", "code": status}, status_code=status)


class TinyState:
    def __init__(self, window: float):
        self.window = window
        self.hits = 0

    def reset(self) -> None:
        self.hits = 0


async def list_notes(request: Request) -> Response:
    state = request.app.state.sandbox
    state.of("tiny").hits += 1
    with state.store.read() as db:
        notes = [row[0] for row in db.execute("SELECT text FROM tiny_notes ORDER BY id")]
    return JSONResponse({"notes": notes})


async def add_note(request: Request) -> Response:
    body = await request.json()
    with request.app.state.sandbox.store.transaction() as db:
        db.execute("INSERT INTO tiny_notes (text) VALUES (?)", (body["text"],))
    return JSONResponse({"added": body["text"]}, status_code=201)


async def hits(request: Request) -> Response:
    """how often the notes were listed"""
    return JSONResponse({"hits": request.app.state.sandbox.of("tiny").hits})


def seed_tiny(db: sqlite3.Connection, content: bool) -> None:
    db.execute("INSERT INTO tiny_notes (text) VALUES ('seeded')")


TINY = Interface(
    name="tiny",
    prefixes=("/tiny",),
    routes=[
        Route("/tiny/notes", list_notes, methods=["GET"]),
        Route("/tiny/notes", add_note, methods=["POST"]),
    ],
    error=tiny_error,
    control_routes=[Route("/hits", hits, methods=["GET"])],
    ddl="CREATE TABLE IF NOT EXISTS tiny_notes (id INTEGER PRIMARY KEY AUTOINCREMENT, "
    "text TEXT NOT NULL);",
    tables=("tiny_notes",),
    seed=seed_tiny,
    state=TinyState,
)


@pytest.fixture
def composed(make_sandbox) -> Iterator[tuple[object, httpx.Client]]:
    """Forem and the tiny interface in one sandbox: the default list plus one line."""
    server = make_sandbox(interfaces=[*default_interfaces(), TINY])
    with httpx.Client(
        base_url=server.base_url, headers={"User-Agent": USER_AGENT}, verify=shared_context()
    ) as http:
        yield server, http


def test_a_fifth_interface_is_served_beside_forem(composed) -> None:
    server, http = composed
    assert http.get("/tiny/notes").json() == {"notes": ["seeded"]}
    assert http.post("/tiny/notes", json={"text": "more"}).status_code == 201
    assert http.get("/tiny/notes").json() == {"notes": ["seeded", "more"]}
    assert http.get("/api/articles/1001").status_code == 200  # Forem as before
    # Inside its prefix, an unknown path or a wrong method is its own 404.
    for method, path in (("GET", "/tiny/nothing"), ("DELETE", "/tiny/notes")):
        missing = http.request(method, path)
        assert missing.status_code == 404
        assert missing.json() == {"problem": "tiny trouble", "code": 404}
    # A path nobody owns: the neutral 404.
    nobody = http.get("/elsewhere")
    assert (nobody.status_code, nobody.text) == (404, "Not Found")


def test_the_generic_layers_serve_the_new_interface(composed) -> None:
    server, http = composed
    http.get("/tiny/notes")
    http.get("/api/tags")
    http.get("/elsewhere")
    rows = {(row["interface"], row["route"], row["status"]): row["count"] for row in server.stats()}
    assert rows == {
        ("tiny", "/tiny/notes", 200): 1,
        ("forem", "/api/tags", 200): 1,
        (None, "<unmatched>", 404): 1,
    }
    assert server.requests()[-3]["interface"] == "tiny"

    # A fault on its route is answered in its body; the interface is found from the route.
    fault = server.fault("GET", "/tiny/notes", status=503)
    assert fault["interface"] == "tiny"
    failed = http.get("/tiny/notes")
    assert failed.status_code == 503 and failed.json() == {"problem": "tiny trouble", "code": 503}
    limited = server.fault("POST", "/tiny/notes", status=429, retry_after=4)
    assert limited["interface"] == "tiny"
    refused = http.post("/tiny/notes", json={"text": "never"})
    assert refused.headers["Retry-After"] == "4" and refused.json()["code"] == 429
    assert server.count(interface="tiny", status=503) == 1

    # Its control routes live under /__sandbox/tiny and are listed in the index.
    assert http.get("/__sandbox/tiny/hits").json() == {"hits": 1}
    index = http.get("/__sandbox").json()
    assert index["endpoints"]["GET /__sandbox/tiny/hits"] == "how often the notes were listed"
    assert index["interfaces"]["tiny"]["prefixes"] == ["/tiny"]

    # Reset: its tables back to its seed and its runtime state too, with Forem's.
    http.post("/tiny/notes", json={"text": "gone after reset"})
    created = http.post(
        "/api/articles",
        headers={"api-key": server.demo_api_key},
        json={"article": {"title": "Gone too", "body_markdown": "x"}},
    ).json()
    server.reset()
    assert http.get("/__sandbox/tiny/hits").json() == {"hits": 0}
    assert http.get("/tiny/notes").json() == {"notes": ["seeded"]}
    assert http.get(f"/api/articles/{created['id']}").status_code == 404


def test_a_fault_names_an_interface_that_serves_its_route(composed) -> None:
    server, http = composed
    for spec in (
        {"interface": "forem", "method": "GET", "route": "/tiny/notes", "status": 500},
        {"interface": "nope", "method": "GET", "route": "/tiny/notes", "status": 500},
        {"method": "GET", "route": "/elsewhere", "status": 500},
    ):
        response = http.post("/__sandbox/faults", json=spec)
        assert response.status_code == 422, spec
    assert (
        http.post(
            "/__sandbox/faults",
            json={"interface": "tiny", "method": "GET", "route": "/tiny/notes", "status": 500},
        ).status_code
        == 201
    )


def test_an_interface_new_to_a_database_file_is_created_and_seeded(tmp_path, make_sandbox) -> None:
    db = tmp_path / "sandbox.db"
    first = make_sandbox(db_path=db)
    first.stop()
    second = make_sandbox(db_path=db, interfaces=[*default_interfaces(), TINY])
    assert not second.created  # Forem's data was reopened, the tiny tables added
    with httpx.Client(base_url=second.base_url, verify=shared_context()) as http:
        assert http.get("/tiny/notes").json() == {"notes": ["seeded"]}


def test_extra_routes_serve_paths_no_interface_owns(make_sandbox) -> None:
    async def extra(request: Request) -> Response:
        return JSONResponse({"extra": True})

    server = make_sandbox(extra_routes=[Route("/extra", extra, methods=["GET"])])
    with httpx.Client(base_url=server.base_url, verify=shared_context()) as http:
        assert http.get("/extra").json() == {"extra": True}
        assert http.post("/extra").text == "Not Found"  # the neutral 404
        assert http.get("/api/extra").json()["status"] == 404  # Forem's, under its prefix
    assert (None, "/extra", 200) in {
        (r["interface"], r["route"], r["status"]) for r in server.stats()
    }


def _named(name: str, *prefixes: str, excludes: tuple[str, ...] = ()) -> Interface:
    return Interface(name=name, prefixes=prefixes, excludes=excludes, routes=[], error=tiny_error)


def test_the_longest_prefix_owns_a_path() -> None:
    forem = _named("forem", "/api", "/images", excludes=("/api/v1",))
    alone = Ownership([forem])
    assert alone.owner("/api/articles") is forem and alone.owner("/api") is forem
    assert alone.owner("/api/v1/ingest") is None  # left to the log service
    assert alone.owner("/api/v1") is None and alone.owner("/api/v10") is forem
    assert alone.owner("/apix") is None and alone.owner("/") is None
    logs = _named("logs", "/api/v1")
    both = Ownership([forem, logs])
    assert both.owner("/api/v1/query") is logs and both.owner("/api/articles") is forem


def test_fault_points_are_every_route_unless_named() -> None:
    assert _named("all", "/x").takes_faults("/x/anything")
    picky = Interface(
        name="picky", prefixes=("/x",), routes=[], error=tiny_error, fault_points=("/x/writes",)
    )
    assert picky.takes_faults("/x/writes") and not picky.takes_faults("/x/reads")


def test_a_composition_refuses_clashes() -> None:
    from toolkit_sandbox.app import SandboxApp
    from toolkit_sandbox.state import SandboxState
    from toolkit_sandbox.store import Store

    state = SandboxState(store=Store())
    with pytest.raises(ValueError, match="claimed by both"):
        SandboxApp([_named("one", "/x"), _named("two", "/x")], state)
    with pytest.raises(ValueError, match="one name"):
        SandboxApp([_named("one", "/x"), _named("one", "/y")], state)
    with pytest.raises(ValueError, match="name"):
        _named("Bad Name", "/x")
    with pytest.raises(ValueError, match="prefix"):
        _named("slash", "/x/")
    state.store.close()


# --- an interface on the shared endpoint skeleton: it gives its authentication, its
# context and its error body, and nothing else -------------------------------------------


def shaped_error(status: int, message: str | None) -> Response:
    return JSONResponse({"oops": message or "shaped trouble", "status": status}, status_code=status)


def _shaped(exc: ErrorAnswer, request: Request) -> Response:
    response = shaped_error(exc.status, exc.message)
    response.headers.update(exc.headers)
    return response


SHAPED = Endpoints(error=_shaped)


class ShapedCtx(Context):
    def __init__(self, call: Call, who: str):
        super().__init__(call.request, call.state)
        self.who = who


async def _token(call: Call) -> ShapedCtx:
    call.headers["X-Shaped-Seen"] = "1"  # on every answer from here on, errors included
    who = call.request.headers.get("x-token")
    if who is None:
        raise ErrorAnswer(401, "who are you?", headers={"WWW-Authenticate": "Token"})
    call.note_caller(f"token-{who}")
    return ShapedCtx(call, who)


def _no_caller(scope, state) -> None:
    return None


@SHAPED.endpoint(_token, status=201)
async def shaped_greet(ctx: ShapedCtx) -> dict[str, str]:
    if ctx.path_param("name") == "broken":
        raise RuntimeError("a bug in a handler")
    if ctx.params.get("refuse"):
        raise ErrorAnswer(409, "not now")
    return {"hello": ctx.path_param("name"), "from": ctx.who, "base": ctx.base}


SHAPED_INTERFACE = Interface(
    name="shaped",
    prefixes=("/shaped",),
    error=shaped_error,
    routes=[Route("/shaped/{name}", shaped_greet, methods=["POST"])],
    caller=noted(_no_caller),
)


def test_an_interface_on_the_endpoint_skeleton_gives_only_its_auth_context_and_body(
    make_sandbox,
) -> None:
    server = make_sandbox(interfaces=[*default_interfaces(), SHAPED_INTERFACE])
    with httpx.Client(base_url=server.base_url, verify=shared_context()) as http:
        anonymous = http.post("/shaped/ann")
        assert anonymous.status_code == 401
        assert anonymous.json() == {"oops": "who are you?", "status": 401}
        assert anonymous.headers["WWW-Authenticate"] == "Token"
        assert anonymous.headers["X-Shaped-Seen"] == "1"
        greeted = http.post("/shaped/ann", headers={"X-Token": "t1"})
        assert greeted.status_code == 201
        assert greeted.json() == {"hello": "ann", "from": "t1", "base": server.base_url}
        assert greeted.headers["X-Shaped-Seen"] == "1"
        refused = http.post("/shaped/ann?refuse=1", headers={"X-Token": "t1"})
        assert (refused.status_code, refused.json()) == (409, {"oops": "not now", "status": 409})
        assert refused.headers["X-Shaped-Seen"] == "1"
        broken = http.post("/shaped/broken", headers={"X-Token": "t2"})
        assert broken.status_code == 500
        assert broken.json() == {"oops": "shaped trouble", "status": 500}
    callers = [
        (record["status"], record["caller"])
        for record in server.requests()
        if record["interface"] == "shaped"
    ]
    assert callers == [(401, None), (201, "token-t1"), (409, "token-t1"), (500, "token-t2")]
