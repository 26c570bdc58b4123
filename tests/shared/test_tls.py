"""One TLS context per process, shared by every client toolkit makes."""

from __future__ import annotations

import shutil
import ssl

import certifi

from toolkit.clients.base import ApiClient
from toolkit.tls import shared_context


def test_every_client_shares_one_verifying_context():
    first, second = ApiClient("https://api.example"), ApiClient("https://other.example")
    try:
        contexts = {
            id(c._client._transport._pool._ssl_context)  # type: ignore[attr-defined]
            for c in (first, second)
        }
        assert contexts == {id(shared_context())}
        assert shared_context().verify_mode == ssl.CERT_REQUIRED
        assert shared_context().check_hostname
        assert shared_context().cert_store_stats()["x509_ca"] > 0
    finally:
        first.close()
        second.close()


def test_a_bundle_named_in_the_environment_gets_a_context_of_its_own(tmp_path, monkeypatch):
    default = shared_context()
    bundle = tmp_path / "bundle.pem"
    shutil.copy(certifi.where(), bundle)
    monkeypatch.setenv("SSL_CERT_FILE", str(bundle))
    named = shared_context()
    assert named is not default and named is shared_context()
    monkeypatch.undo()
    assert shared_context() is default
