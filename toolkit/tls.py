"""The TLS context every HTTP client of the process shares.

httpx makes a context for each client it is given no transport for, loading the CA
bundle each time: 25-50 ms of processor per client, paid by every command that makes a
client and by each of the sandbox's webhooks. A context is safe to share between
connections and threads, so the process makes one the way httpx would (certifi's bundle,
or `SSL_CERT_FILE` / `SSL_CERT_DIR` when set), the first time it is needed, and again
only if those settings change.
"""

from __future__ import annotations

import functools
import os
import ssl

import httpx


def shared_context() -> ssl.SSLContext:
    return _context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _context(cafile: str | None, capath: str | None) -> ssl.SSLContext:
    return httpx.create_ssl_context()  # reads the same two settings
