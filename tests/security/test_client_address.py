"""The client's address behind a trusted proxy (core/client_address.py): read from
X-Forwarded-For only when the peer is in TRUSTED_PROXIES, and then the rightmost
address that is not a trusted proxy, so nothing a client writes itself is believed."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings

from core.client_address import MAX_HOPS, forwarded_client, parse_address

LOOPBACK = ["127.0.0.1", "::1"]


@pytest.mark.parametrize(
    ("peer", "header", "trusted", "client"),
    [
        # nginx on the same host appends the address it was reached from.
        ("127.0.0.1", "203.0.113.9", LOOPBACK, "203.0.113.9"),
        # What the client wrote itself lies to the left and is never read.
        ("127.0.0.1", "10.0.0.1, 198.51.100.1, 203.0.113.9", LOOPBACK, "203.0.113.9"),
        # A peer that is no trusted proxy is the client, whatever it sends.
        ("203.0.113.9", "127.0.0.1", LOOPBACK, "203.0.113.9"),
        ("203.0.113.9", "198.51.100.1", [], "203.0.113.9"),
        ("127.0.0.1", "203.0.113.9", [], "127.0.0.1"),
        # Two trusted hops (a balancer in 10/8, then nginx): the first untrusted one.
        (
            "127.0.0.1",
            "198.51.100.1, 203.0.113.9, 10.0.0.5",
            [*LOOPBACK, "10.0.0.0/8"],
            "203.0.113.9",
        ),
        # Every hop trusted: the leftmost is the client.
        ("127.0.0.1", "10.0.0.7, 10.0.0.5", [*LOOPBACK, "10.0.0.0/8"], "10.0.0.7"),
        # Something that is no address where a trusted proxy wrote: keep the proxy.
        ("127.0.0.1", "203.0.113.9, unknown", LOOPBACK, "127.0.0.1"),
        ("127.0.0.1", "", LOOPBACK, "127.0.0.1"),
        # Ports, brackets, IPv6 and IPv4 mapped into IPv6.
        ("127.0.0.1", "203.0.113.9:4711", LOOPBACK, "203.0.113.9"),
        ("::1", "[2001:db8::7]:443", LOOPBACK, "2001:db8::7"),
        ("::ffff:127.0.0.1", "::ffff:203.0.113.9", LOOPBACK, "203.0.113.9"),
    ],
)
def test_the_client_is_the_rightmost_address_no_trusted_proxy_wrote(peer, header, trusted, client):
    assert forwarded_client(peer, header, trusted) == client


def test_a_long_chain_of_trusted_hops_is_read_only_so_far_from_the_right():
    hops = [f"10.0.{i // 256}.{i % 256}" for i in range(2000)]
    header = ", ".join(["198.51.100.1", *hops])
    found = forwarded_client("127.0.0.1", header, ["127.0.0.1", "10.0.0.0/8"])
    assert found == hops[-MAX_HOPS]


@pytest.mark.parametrize("text", ["", "unknown", "1.2.3", "[::1", "999.1.1.1", "a:b"])
def test_what_is_no_address_parses_to_none(text):
    assert parse_address(text) is None


@pytest.mark.django_db
@override_settings(METRICS_ALLOW_IPS=LOOPBACK, METRICS_TOKEN="")
def test_metrics_through_the_proxy_judge_the_forwarded_client(client):
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
    through_proxy = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}
    assert client.get("/metrics", **through_proxy).status_code == 403
    # A stranger cannot claim loopback by writing the header itself.
    forged = {"REMOTE_ADDR": "203.0.113.9", "HTTP_X_FORWARDED_FOR": "127.0.0.1"}
    assert client.get("/metrics", **forged).status_code == 403


@pytest.mark.django_db
def test_the_request_log_names_the_forwarded_client(client, caplog):
    with caplog.at_level(logging.INFO, logger="indexer.requests"):
        client.get("/api/v1/ping", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="203.0.113.9")
    (line,) = [r.getMessage() for r in caplog.records if r.name == "indexer.requests"]
    assert " client=203.0.113.9" in line
