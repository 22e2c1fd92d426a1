"""An answer that breaks off mid-body makes the agent call again, not fail the range.

Found by the fault suite (tests/chaos/test_coordinator_cuts.py): a batch's
answer cut halfway raised IncompleteRead out of `Coordinator.post`, and the
range was released as failed. Batches are idempotent, so the call is repeated.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from seed_node.http import Coordinator
from tests.support.net import http_server


@pytest.fixture
def cut_once() -> Iterator[tuple[str, list[str]]]:
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            calls.append(self.path)
            body = json.dumps({"next": 121, "stored": 3, "advanced": True}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            # The first answer breaks off halfway through its body.
            self.wfile.write(body[: len(body) // 2] if len(calls) == 1 else body)
            self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    with http_server(Handler) as url:
        yield url, calls


@pytest.mark.slow
def test_a_batch_answer_cut_halfway_is_asked_for_again(cut_once) -> None:
    url, calls = cut_once
    coordinator = Coordinator(url, "token", timeout=10, max_backoff=0.1)
    answer = coordinator.post("/ranges/17/batch", {"epoch": 1, "next": 121})
    assert answer == {"next": 121, "stored": 3, "advanced": True}
    assert calls == ["/api/v1/ranges/17/batch", "/api/v1/ranges/17/batch"]


@pytest.fixture
def failing_store() -> Iterator[tuple[str, list[str]]]:
    """A coordinator that redirects to a store whose first download fails with 500."""
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            calls.append(self.path)
            if self.path.startswith("/api/v1/"):
                self.send_response(307)
                self.send_header("Location", f"http://127.0.0.1:{self.server.server_port}/obj")
                self.send_header("X-Snapshot-Next", "42")
                self.send_header("Content-Length", "0")
            else:
                failed = calls.count("/obj") == 1
                self.send_response(500 if failed else 200)
                self.send_header("Content-Length", "5")
            self.end_headers()
            if not self.path.startswith("/api/v1/"):
                self.wfile.write(b"error" if calls.count("/obj") == 1 else b"whole")

        def log_message(self, *args: object) -> None:
            pass

    with http_server(Handler) as url:
        yield url, calls


def test_a_store_that_fails_a_snapshot_download_is_asked_again_through_the_coordinator(
    failing_store,
) -> None:
    url, calls = failing_store
    coordinator = Coordinator(url, "token", timeout=10, max_backoff=0.1)
    headers, stream = coordinator.open_followed("/groups/1/lanes/history/snapshot", {"epoch": 3})
    with stream:
        assert (headers["X-Snapshot-Next"], stream.read()) == ("42", b"whole")
    assert calls == ["/api/v1/groups/1/lanes/history/snapshot?epoch=3", "/obj"] * 2
