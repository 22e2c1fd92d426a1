"""The node keeps its connections to the coordinator open between calls.

Each call on a connection of its own cost a TCP connect and a new request to
gunicorn; in bench/bench_inspect.py that was a third of the node's busy time
(issue 26). A kept connection the coordinator closed while it was idle is
called on again at once on a new one: no backoff, no failover.
"""

from __future__ import annotations

import gc
import json
import logging
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from seed_node.http import Coordinator, Rejected
from tests.support.certs import write_self_signed_cert
from tests.support.net import LOOPBACK


class KeptServer:
    """HTTP/1.1 on loopback that keeps connections open, counting those it accepted
    and those that ended; ``close_after`` answers end their connection after
    answering (without saying so, as an expired keep-alive does); with `tls`, over
    TLS (its end then a TCP close with no TLS close_notify, as a server that drops
    an idle connection sends)."""

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.accepted = 0
        self.ended = 0
        self.paths: list[str] = []
        self.close_after: set[str] = set()
        self.errors: dict[str, tuple[int, bytes]] = {}
        self.changed = threading.Condition()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def setup(self) -> None:
                super().setup()
                with owner.changed:
                    owner.accepted += 1

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers["Content-Length"]))
                path = self.path.removeprefix("/api/v1")
                owner.paths.append(path)
                status, body = owner.errors.get(path, (200, json.dumps({"path": path}).encode()))
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                self.close_connection = path in owner.close_after

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def shutdown_request(self, request: Any) -> None:
                super().shutdown_request(request)
                with owner.changed:
                    owner.ended += 1
                    owner.changed.notify_all()

        self.server = Server((LOOPBACK, 0), Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        scheme = "http" if tls is None else "https"
        self.url = f"{scheme}://{LOOPBACK}:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def wait_ended(self, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.ended >= count, timeout=10), (
                f"{self.ended} connection(s) ended, not {count}"
            )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def server() -> Iterator[KeptServer]:
    kept = KeptServer()
    yield kept
    kept.close()


@pytest.fixture
def other() -> Iterator[KeptServer]:
    kept = KeptServer()
    yield kept
    kept.close()


def test_calls_share_one_connection(server: KeptServer) -> None:
    coordinator = Coordinator(server.url, "token", timeout=10)
    for number in range(5):
        assert coordinator.post(f"/ranges/{number}/heartbeat", {"epoch": 1}) == {
            "path": f"/ranges/{number}/heartbeat"
        }
    assert server.accepted == 1
    coordinator.close()
    server.wait_ended(1)


@pytest.fixture(params=["http", "https"])
def idle_closing(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[KeptServer]:
    """A KeptServer, plain or over TLS (the node trusting its self-signed certificate)."""
    tls = None
    if request.param == "https":
        cert, key = write_self_signed_cert(tmp_path)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(cert, key)
        monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # read by the node's default context
    kept = KeptServer(tls)
    yield kept
    kept.close()


def test_a_connection_closed_while_idle_is_called_on_again_at_once(
    idle_closing: KeptServer, other: KeptServer, caplog: pytest.LogCaptureFixture
) -> None:
    # Over TLS a connection the server dropped reads as ssl.SSLEOFError (no
    # close_notify): stale too, not a host that failed.
    server = idle_closing
    coordinator = Coordinator([server.url, other.url], "token", timeout=10, max_backoff=60)
    server.close_after.add("/first")
    assert coordinator.post("/first") == {"path": "/first"}
    server.wait_ended(1)  # the kept connection is closed now; the node does not know yet
    with caplog.at_level(logging.WARNING, logger="seed_node.http"):
        assert coordinator.post("/second") == {"path": "/second"}
        assert coordinator.post("/third") == {"path": "/third"}
    # No "unreachable; retrying in" (a backoff) and no "calls go to" (a failover).
    assert [record.getMessage() for record in caplog.records] == []
    assert coordinator.base_url == server.url
    assert other.accepted == 0
    assert server.paths == ["/first", "/second", "/third"]
    assert server.accepted == 2  # the one closed, then one for /second and /third
    coordinator.close()


def test_an_answer_not_read_to_its_end_is_not_read_as_the_next(server: KeptServer) -> None:
    # An error body longer than the client reads of it (64 KiB): its rest stays on
    # the socket, and here reads as an answer of its own.
    forged = b'HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n{"path": "forged"}'
    server.errors["/big"] = (400, b"x" * 65536 + forged)
    coordinator = Coordinator(server.url, "token", timeout=10)
    assert coordinator.post("/before") == {"path": "/before"}
    with pytest.raises(Rejected):
        coordinator.post("/big")
    assert coordinator.post("/after") == {"path": "/after"}
    assert coordinator.post("/again") == {"path": "/again"}
    assert server.accepted == 2  # a new one after /big, kept for /again
    assert server.paths == ["/before", "/big", "/after", "/again"]
    coordinator.close()


def test_failing_over_drops_the_old_hosts_connection(server: KeptServer, other: KeptServer) -> None:
    coordinator = Coordinator([server.url, other.url], "token", timeout=10, max_backoff=60)
    assert coordinator.post("/first") == {"path": "/first"}
    server.errors["/down"] = (503, b'{"error": "unavailable"}')
    assert coordinator.post("/down") == {"path": "/down"}  # answered by the other host
    assert coordinator.post("/next") == {"path": "/next"}
    assert coordinator.base_url == other.url
    server.wait_ended(1)  # the node closed its connection to the failed host
    assert (server.accepted, other.accepted) == (1, 1)
    coordinator.close()


def test_a_thread_that_ends_closes_its_connection(server: KeptServer) -> None:
    coordinator = Coordinator(server.url, "token", timeout=10)

    def calls() -> None:
        coordinator.post("/one")
        coordinator.post("/two")

    thread = threading.Thread(target=calls)
    thread.start()
    thread.join(10)
    assert server.accepted == 1
    server.wait_ended(1)
    assert coordinator.post("/main") == {"path": "/main"}  # this thread's own
    assert server.accepted == 2
    coordinator.close()
    server.wait_ended(2)


def test_a_client_dropped_closes_its_connection(server: KeptServer) -> None:
    coordinator = Coordinator(server.url, "token", timeout=10)
    coordinator.post("/one")
    assert server.accepted == 1
    del coordinator
    gc.collect()
    server.wait_ended(1)
