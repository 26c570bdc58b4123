"""The MCP server: the toolkit for AI assistants, over stdio and over HTTP behind OAuth 2.1.

    service.py   start-up: the stdio session and the HTTP transport from the configuration,
                 and the clients of the HTTP transport (what `toolkit mcp` calls)
    server.py    ToolkitMCP (the SDK's low-level Server): the tools, the posts as
                 resources, errors as the CLI's
    tools.py     the tools, each calling the `toolkit.commands` function the CLI calls and
                 returning its document (`toolkit.commands.results`)
    scopes.py    read, draft-write, publish, logs: what each allows
    http.py      the HTTP app: /mcp behind the SDK's auth routes, with toolkit's own parts
    guards.py    the layers in front of /mcp and the authorization server's routes
    auth.py      the authorization server's provider: codes, grants, tokens
    endpoints.py /token and /register, and client authentication at /token
    registration.py  what a client may register, and a client as the SDK sees it
    consent.py   the authorization screen, approved with the operator secret
    store.py     clients, codes, grants and tokens in SQLite, hashed
    events.py    what the server tells its owner (the run log's hook)
    bodies.py    request bodies from anyone: UTF-8 JSON of bounded nesting, or a 400
    query_worker.py  the process a local `query_run_log` runs in, so that it can be stopped

`toolkit.mcp.service` builds a server from the configuration; `toolkit mcp` runs it.
Importing this package costs nothing: the SDK is imported by the modules that use it.
"""
