"""Interface C: the archive tasks of a file-conversion task API (CloudConvert API v2),
under `/v2` (and `/sync/v2`, the real service's sync host: waits, and jobs created and
waited for).

Jobs of named tasks, the `import/upload`, `archive` and `export/url` operations, the
upload form and download URLs (`/v2/storage/`), show, list, wait, cancel, retry and
delete, job and account webhooks; archives really built from the uploaded files (zip, tar, tar.gz,
tar.bz2, 7z) on worker threads, streamed to disk. README.md beside the package
documents it, with a table of each behaviour against the real service.

    from toolkit_sandbox import archive
    archive.interface()   # -> Interface, composed by toolkit_sandbox.app
"""

from __future__ import annotations

from toolkit_sandbox.interface import Interface


def interface() -> Interface:
    from toolkit_sandbox.archive import api, control, http, schema, seed, storage
    from toolkit_sandbox.archive.state import ArchiveState

    return Interface(
        name=http.NAME,
        prefixes=("/v2", "/sync/v2"),
        routes=[*api.routes, *storage.routes],
        error=http.error,
        throttled=http.throttled,
        caller=http.caller_of,
        streamed=storage.STREAMED,
        control_routes=control.routes,
        ddl=schema.DDL,
        tables=schema.DATA_TABLES,
        schema_version=schema.SCHEMA_VERSION,
        seed=seed.load,
        state=ArchiveState.create,
    )
