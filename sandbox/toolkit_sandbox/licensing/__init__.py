"""Interface D: the Google Workspace Marketplace License API (appsmarket v2).

`GET /appsmarket/v2/customerLicense/{applicationId}/{customerId}`,
`GET /appsmarket/v2/userLicense/{applicationId}/{userId}` and the deprecated
`GET /appsmarket/v2/licenseNotification/{applicationId}`, with OAuth bearer tokens and
Google's error body; plus the discovery document at `/$discovery/rest?version=v2`, its
roots rewritten to the sandbox, so that Google's own client library can be pointed at it.

    from toolkit_sandbox import licensing
    licensing.interface()   # -> Interface, composed by toolkit_sandbox.app
"""

from __future__ import annotations

from toolkit_sandbox.interface import Interface


def interface() -> Interface:
    from toolkit_sandbox.licensing import control, http, licenses, schema, seed

    return Interface(
        name=http.NAME,
        prefixes=("/appsmarket", "/$discovery"),
        routes=licenses.routes,
        error=http.error,
        caller=http.caller_of,
        control_routes=control.routes,
        ddl=schema.DDL,
        tables=schema.DATA_TABLES,
        schema_version=schema.SCHEMA_VERSION,
        seed=seed.load,
        state=http.LicensingState.create,
    )
