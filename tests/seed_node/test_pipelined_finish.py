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

from seed_node import reporting
from seed_node.control import Control
from tests.seed_node.test_agent import one_lease, run_agent
from tests.support.nntpd import NNTPServer
from tests.support.scripted import NO_LEASE, Answer, ScriptedCoordinator, binary_articles

pytestmark = pytest.mark.slow

HELD_SECONDS = 5.0  # how long the first range's last batch waits for the second lease
OK = (200, {"next": 0, "stored": 0})


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


def agent(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer, *args: str, **kw: Any
) -> int:
    return run_agent(
        coordinator,
        token_file,
        "--news-server",
        f"nntp://{news.host}:{news.port}",
        "--batch-headers",
        "100000",  # one batch per range: its last
        *args,
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
    coordinator: ScriptedCoordinator,
    token_file: Path,
    news: NNTPServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Closing the reporter waits a moment only: the stop's own wait is what is tested.
    monkeypatch.setattr(reporting, "CLOSE_SECONDS", 0.05)
    control = Control()
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)

    def batch(_body: Any) -> Answer:
        control.stop.set()  # a SIGTERM while the range's last batch is in flight
        threading.Event().wait(0.5)
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


# --- window mode -------------------------------------------------------------

LANE = "/groups/5/lanes/history"
LANE_OFFER = {
    "group": {"id": 5, "name": "alt.binaries.x"},
    "lane": "history",
    "epoch": 2,
    "rules": None,
    "snapshot": None,
}


def lane_routes(
    coordinator: ScriptedCoordinator, events: list[str], *, answers_work_again: bool = False
) -> threading.Event:
    """A lane of two ranges (7: 1-200, 8: 201-400). Its `next` honours `read` as the
    coordinator does (the range read is not answered again) or, with
    ``answers_work_again``, as one before issue 27 did (the range in work until it is
    finished). Returns the event set when range 8 is handed out."""
    ranges = {7: (1, 200), 8: (201, 400)}
    handed: list[int] = []
    finished: set[int] = set()
    second = threading.Event()
    lane_taken = threading.Event()

    def lease(_body: Any) -> Answer:
        if lane_taken.is_set():
            return NO_LEASE
        lane_taken.set()
        return 200, {"lease": LANE_OFFER, "retry_after": None, "paused": None}

    def next_range(body: Any) -> Answer:
        read = body.get("read")
        events.append("next" if read is None else f"next after {read}")
        in_work = handed[-1] if handed and handed[-1] not in finished else None
        if in_work is not None and (answers_work_again or in_work != read):
            range_id = in_work
        else:
            waiting = [r for r in ranges if r not in handed]
            if not waiting:
                return 200, {"range": None}
            range_id = waiting[0]
            handed.append(range_id)
        events.append(f"range {range_id}")
        if range_id == 8:
            second.set()
        start, end = ranges[range_id]
        return 200, {
            "range": {"id": range_id, "start": start, "end": end, "next": start, "epoch": 3}
        }

    def finish(range_id: int) -> Callable[[Any], Answer]:
        def answer(_body: Any) -> Answer:
            finished.add(range_id)
            events.append(f"finish {range_id}")
            return 204, None

        return answer

    coordinator.routes.update(
        {
            "/groups/lease": lease,
            f"{LANE}/next": next_range,
            "/ranges/7/finish": finish(7),
            "/ranges/8/finish": finish(8),
            f"{LANE}/snapshot": lambda _: (events.append("snapshot"), (204, None))[1],
            f"{LANE}/release": lambda _: (events.append("release lane"), (204, None))[1],
            "/ranges/8/batch": lambda _: (events.append("batch 8 answered"), OK)[1],
        }
    )
    return second


def window_agent(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer, **kw: Any
) -> int:
    return agent(coordinator, token_file, news, "--mode", "window", **kw)


def test_a_lane_asks_for_its_next_range_while_the_last_batch_is_in_flight(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    events: list[str] = []
    second = lane_routes(coordinator, events)

    def batch_of_7(_body: Any) -> Answer:
        second.wait(HELD_SECONDS)  # answered once range 8 was handed out (or at last)
        events.append("batch 7 answered")
        return OK

    coordinator.routes["/ranges/7/batch"] = batch_of_7
    assert window_agent(coordinator, token_file, news) == 0
    # Every call once; the worker's calls and the reporter's run side by side, so
    # only the order the pipelining promises is asserted (the worker may read
    # range 8 and ask after it before the reporter finishes 7).
    assert sorted(events) == sorted([
        "next", "range 7", "next after 7", "range 8", "next after 8", "snapshot",
        "release lane", "batch 7 answered", "finish 7", "batch 8 answered", "finish 8",
    ])  # fmt: skip
    assert in_order(events, "next", "range 7", "next after 7", "range 8", "next after 8",
                    "snapshot", "release lane")  # fmt: skip
    assert in_order(events, "batch 7 answered", "finish 7", "batch 8 answered", "finish 8")
    # The lane's next range was asked (and handed out) while batch 7 was unanswered,
    # and the snapshot waited for every batch and finish before it.
    assert in_order(events, "next after 7", "range 8", "batch 7 answered")
    assert in_order(events, "finish 8", "snapshot")
    assert coordinator.posted(f"{LANE}/next")[1] == {"epoch": 2, "read": 7}


def in_order(events: list[str], *expected: str) -> bool:
    """The events named come in this order in ``events`` (others may come between)."""
    places = [events.index(event) for event in expected]
    return places == sorted(places)


def test_a_stopped_lane_waits_for_the_last_batch_and_its_finish_then_snapshots(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    control = Control()
    events: list[str] = []
    second = lane_routes(coordinator, events)
    next_range = coordinator.routes[f"{LANE}/next"]

    def next_then_stop(body: Any) -> Answer:
        if body.get("read") == 7:
            control.stop.set()  # a SIGTERM while range 7's last batch is in flight
        return next_range(body)

    def batch_of_7(_body: Any) -> Answer:
        second.wait(HELD_SECONDS)
        threading.Event().wait(0.3)
        events.append("batch 7 answered")
        return OK

    coordinator.routes[f"{LANE}/next"] = next_then_stop
    coordinator.routes["/ranges/7/batch"] = batch_of_7
    coordinator.routes["/ranges/8/release"] = lambda _: (events.append("release 8"), (204, None))[1]
    assert window_agent(coordinator, token_file, news, control=control) == 0
    assert events == [
        "next",
        "range 7",
        "next after 7",
        "range 8",
        "batch 7 answered",  # the stop waited for it,
        "finish 7",  # and for the finish after it,
        "batch 8 answered",  # reported range 8 as far as it was read,
        "snapshot",  # snapshotted the window there
        "release 8",
        "release lane",
    ]
    (snapshot,) = coordinator.posted(f"{LANE}/snapshot")
    assert snapshot == {"epoch": 2, "next": coordinator.posted("/ranges/8/batch")[-1]["next"]}
    assert not coordinator.posted("/ranges/8/finish")


def test_a_refused_last_batch_of_a_lane_range_is_released_and_no_snapshot_passes_it(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    events: list[str] = []
    second = lane_routes(coordinator, events)

    def refused(_body: Any) -> Answer:
        second.wait(HELD_SECONDS)
        return 400, {"error": "invalid", "detail": "files[0].subject: must not be empty."}

    coordinator.routes["/ranges/7/batch"] = refused
    coordinator.routes["/ranges/7/release"] = lambda _: (events.append("release 7"), (204, None))[1]
    assert window_agent(coordinator, token_file, news) == 0
    assert not coordinator.posted("/ranges/7/finish")
    (released,) = coordinator.posted("/ranges/7/release")
    assert released["uncounted"] is False and "must not be empty" in released["error"]
    # The window holds range 7's files, never stored: no snapshot may claim them.
    assert "snapshot" not in events
    assert events[-1] == "release lane"
    # Range 8, read while range 7's answer was awaited, is still finished: its
    # own batches were stored. (Whether the worker asked the lane's `next` once
    # more before the refusal came back is a race, and either way is safe.)
    assert coordinator.posted("/ranges/8/finish") == [{"epoch": 3}]


def test_a_coordinator_that_answers_the_range_in_work_again_gets_it_finished_first(
    coordinator: ScriptedCoordinator, token_file: Path, news: NNTPServer
) -> None:
    events: list[str] = []
    lane_routes(coordinator, events, answers_work_again=True)
    coordinator.routes["/ranges/7/batch"] = lambda _: (events.append("batch 7 answered"), OK)[1]
    assert window_agent(coordinator, token_file, news) == 0
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    assert coordinator.posted("/ranges/8/finish") == [{"epoch": 3}]
    # Range 7 once more, then, after its finish, range 8: each read once.
    assert events.index("finish 7") < events.index("range 8")
    assert len(coordinator.posted("/ranges/7/batch")) == 1
    assert len(coordinator.posted("/ranges/8/batch")) == 1
