"""The TLS context every HTTP client of the process shares.

httpx makes a context for each client it is given no transport for, loading the CA
bundle each time: about 25 ms of processor per client, paid by every request of the
sandbox's webhooks and by every command that makes a client. A context is safe to share
between connections and threads, so the process makes one, the way httpx would
(certifi's bundle, or `SSL_CERT_FILE` / `SSL_CERT_DIR`), the first time it is needed.
"""

from __future__ import annotations

import functools
import ssl


@functools.cache
def shared_context() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()
