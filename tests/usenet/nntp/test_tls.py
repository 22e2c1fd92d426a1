"""Implicit TLS (nntps): verified by default, trusted via a CA file, or unverified on request."""

from __future__ import annotations

import ssl

import pytest

from tests.support.certs import write_self_signed_cert
from tests.support.nntpd import NNTPServer, numbered_articles
from usenet.nntp.client import NNTPClient
from usenet.nntp.errors import NNTPConnectionError


@pytest.fixture
def tls_server(tmp_path):
    cert_path, key_path = write_self_signed_cert(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_path, key_path)
    with NNTPServer(ssl_context=context, offer_deflate=True) as server:
        server.add_group("alt.test", numbered_articles(100))
        server.cert_path = cert_path
        yield server


def test_untrusted_certificate_is_refused_by_default(tls_server):
    client = NNTPClient(tls_server.host, tls_server.port, tls=True, timeout=5)
    with pytest.raises(NNTPConnectionError, match="certificate verify failed"):
        client.connect()


def test_certificate_is_trusted_through_a_ca_file(tls_server):
    with NNTPClient(
        tls_server.host, tls_server.port, tls=True, ca_file=str(tls_server.cert_path), timeout=5
    ) as client:
        client.group("alt.test")
        assert len(list(client.over(1, 100))) == 86
        assert client.compression_in_use == "deflate"


def test_verification_can_be_switched_off(tls_server):
    with NNTPClient(tls_server.host, tls_server.port, tls=True, verify=False, timeout=5) as client:
        assert client.group("alt.test").count == 86
