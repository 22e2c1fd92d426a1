"""The heartbeat thread ends when it is closed, even while a heartbeat is being retried."""

from __future__ import annotations

import logging
import socket
import time

import pytest

from seed_node.http import Coordinator
from seed_node.leases import Heartbeat


def a_closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (connections to it are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_heartbeat_being_retried_ends_when_the_heartbeat_is_closed(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A worker done with its leases closes its heartbeat; a heartbeat retried against
    # a coordinator that is gone (a test's, stopped) went on calling it for good, a
    # thread nobody joins (it once called a later test's coordinator on that port).
    coordinator = Coordinator(f"http://127.0.0.1:{a_closed_port()}", "token", max_backoff=60)
    heartbeat = Heartbeat(coordinator, interval=0.05)
    heartbeat.hold("/ranges/1", epoch=1)
    with caplog.at_level(logging.WARNING, logger="seed_node.http"):
        deadline = time.monotonic() + 30
        while not any("unreachable" in record.getMessage() for record in caplog.records):
            assert time.monotonic() < deadline, "the heartbeat never called"
            time.sleep(0.05)
        heartbeat.close()
        heartbeat._thread.join(timeout=10)
    assert not heartbeat._thread.is_alive()
    assert not coordinator.abort.is_set()  # the node was not told to stop: only the heartbeat
    assert not [r for r in caplog.records if r.name == "seed_node.leases"]  # closing is quiet
