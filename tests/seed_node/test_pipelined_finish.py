"""Range mode: a range's last batch no longer holds up the next range.

The worker asks for the next lease while the last batch is in flight; the
range's `finish` follows that batch's answer on the reporter thread; a stop
(SIGTERM) still waits for both; a refused last batch still releases the range
with its error instead of finishing it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from seed_node.control import Control
from tests.seed_node.test_agent import one_lease, run_agent
from tests.support.nntpd import NNTPServer
from tests.support.scripted import NO_LEASE, Answer, ScriptedCoordinator, binary_articles

pytestmark = pytest.mark.slow

HELD_SECONDS = 5.0  # how long the first range's last batch waits for the second lease
OK = (200, {"next": 0, "stored": 0})


@pytest.fixture
def coordinator() -> Iterator[ScriptedCoordinator]:
    running = ScriptedCoordinator()
    yield running
    running.close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text("sn_test-token\n")
    return path


@pytest.fixture
def news() -> Iterator[NNTPServer]:
    with NNTPServer() as server:
        server.add_group("alt.binaries.x", binary_articles())
        yield server


def two_leases(events: list[str], second: threading.Event) -> Callable[[Any], Answer]:
    ranges = [(7, 1, 200), (8, 201, 400)]

    def lease(_body: Any) -> Answer:
        if not ranges:
            return NO_LEASE
        range_id, start, end = ranges.pop(0)
        events.append(f"lease {range_id}")
        if range_id == 8:
            second.set()
        offer = {"id": range_id, "group": "alt.binaries.x", "start": start, "end": end, "epoch": 3}
        return 200, {"lease": offer, "retry_after": None, "paused": None}

    return lease


def agent(coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer, **kw: Any) -> int:
    return run_agent(
        coordinator,
        token_file,
        "--news-server",
        f"nntp://{news.host}:{news.port}",
        "--batch-headers",
        "100000",  # one batch per range: its last
        **kw,
    )


def test_the_next_lease_is_asked_while_the_last_batch_is_in_flight(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    events: list[str] = []
    second = threading.Event()
    coordinator.routes["/ranges/lease"] = two_leases(events, second)

    def batch_of_7(_body: Any) -> Answer:
        second.wait(HELD_SECONDS)  # answered once the next lease was asked (or at last)
        events.append("batch 7 answered")
        return OK

    coordinator.routes["/ranges/7/batch"] = batch_of_7
    coordinator.routes["/ranges/8/batch"] = lambda _: (events.append("batch 8 answered"), OK)[1]
    for range_id in (7, 8):
        coordinator.routes[f"/ranges/{range_id}/finish"] = lambda _, r=range_id: (
            events.append(f"finish {r}"),
            (204, None),
        )[1]
    assert agent(coordinator, token_file, news) == 0
    assert events == [
        "lease 7",
        "lease 8",
        "batch 7 answered",
        "finish 7",
        "batch 8 answered",
        "finish 8",
    ]


def test_a_stop_waits_for_the_last_batch_and_the_finish_after_it(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    control = Control()
    answered = threading.Event()
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)

    def batch(_body: Any) -> Answer:
        control.stop.set()  # a SIGTERM while the range's last batch is in flight
        answered.wait(0.5)
        return OK

    coordinator.routes["/ranges/7/batch"] = batch
    coordinator.routes["/ranges/7/finish"] = lambda _: (204, None)
    assert agent(coordinator, token_file, news, control=control) == 0
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    assert not coordinator.posted("/ranges/7/release")


def test_a_refused_last_batch_releases_the_range_with_its_error_and_never_finishes_it(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["/ranges/7/batch"] = lambda _: (
        400,
        {"error": "invalid", "detail": "files[0].subject: must not be empty."},
    )
    coordinator.routes["/ranges/7/release"] = lambda _: (204, None)
    assert agent(coordinator, token_file, news) == 0
    assert not coordinator.posted("/ranges/7/finish")
    (released,) = coordinator.posted("/ranges/7/release")
    assert released["epoch"] == 3 and released["uncounted"] is False
    assert "must not be empty" in released["error"]
