"""A snapshot upload answered 429 (another upload of the lane streams) is given up
after a few tries: the window worker goes on, and its next snapshot takes its place.

The agent retries a 429 after its Retry-After, which is right for a lease call
over its rate; a snapshot upload retried forever stopped the window worker
inside ``upload_snapshot`` for as long as the other upload held the lane.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from seed_node import window as window_mode
from seed_node.aggregate import Window
from seed_node.control import Context, Control, Settings, Stats
from seed_node.http import Coordinator
from seed_node.window import WindowWorker
from tests.support.net import http_server
from usenet.rules import RuleSet

GIVE_IN_AFTER = 10  # the fake coordinator takes the upload at last, after this many 429s


@pytest.fixture
def busy_lane() -> Iterator[tuple[str, list[str]]]:
    calls: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_PUT(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            calls.append(self.path)
            if len(calls) > GIVE_IN_AFTER:
                self.send_response(204)
                self.end_headers()
                return
            body = json.dumps(
                {"error": "upload_in_progress", "detail": "Another upload is streaming."}
            ).encode()
            self.send_response(429)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    with http_server(Handler) as url:
        yield url, calls


def test_a_snapshot_upload_answered_429_is_given_up_and_the_window_goes_on(
    busy_lane: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, calls = busy_lane
    coordinator = Coordinator(url, "sn_token", timeout=10, max_backoff=0.05)
    context = Context(None, Settings(work_dir=tmp_path), Control(), Stats())  # type: ignore[arg-type]
    worker = WindowWorker("w1", coordinator, context, lane="history")
    window = Window(RuleSet.default(), "alt.binaries.busy")
    assert worker.upload_snapshot("/groups/1/lanes/history", 7, window, 1_000) is False
    assert len(calls) == window_mode.UPLOAD_BUSY_ATTEMPTS < GIVE_IN_AFTER
    assert calls[0] == "/api/v1/groups/1/lanes/history/snapshot?epoch=7&next=1000"
