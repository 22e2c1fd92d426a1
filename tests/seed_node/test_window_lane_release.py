"""A window agent whose range breaks off (stop, news-server failure, lost range) gives its lane back.

Found by the fault suite (tests/chaos): a window agent stopped in the middle of
a range left its lane held, with nobody working it, until the lane's TTL ran out.
Against a real coordinator (live_server).
"""

from __future__ import annotations

from typing import Any

import pytest

from leases.models import GroupLane
from seed_node.control import Context, Control, Settings, Stats
from seed_node.http import Coordinator
from seed_node.window import WindowWorker
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.scripted import ScriptedCoordinator


class NoHeartbeat:
    def hold(self, *args: Any) -> None:
        pass

    def drop(self, *args: Any) -> None:
        pass


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_range_that_breaks_off_gives_the_lane_back(live_server, settings, tmp_path) -> None:
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    group = GroupFactory(name="alt.binaries.lane.release")
    SeedRangeFactory(group=group)
    node = NodeFactory()
    client = Coordinator(live_server.url, node.token, timeout=30)
    offer = client.post("/groups/lease", {"lane": "history"})["lease"]
    context = Context(None, Settings(work_dir=tmp_path), Control(), Stats())  # type: ignore[arg-type]
    worker = WindowWorker("w1", client, context, lane="history")
    # The range read breaks off the way a stop or a news-server failure ends it.
    worker.read_lane_range = lambda *args: None  # type: ignore[method-assign]
    path = f"/groups/{group.id}/lanes/history"
    assert GroupLane.objects.get(group=group, lane="history").node_id == node.id

    reporter = OrderedReporter([])
    assert worker.hold_lane(offer, path, reporter, NoHeartbeat()) is True  # type: ignore[arg-type]

    assert GroupLane.objects.get(group=group, lane="history").node_id is None


class OrderedReporter:
    """A reporter whose pending finish (of the range read before) is done on flush."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def flush(self) -> None:
        self.events.append("finish 1")


def test_a_range_that_breaks_off_gives_the_lane_back_after_the_finish_before_it(
    tmp_path,
) -> None:
    """Range 1 was read to its end (its finish waits on the reporter) and the lane moved
    on with `next read=1`; range 2 breaks off. The lane's release frees every range of
    the lane its holder still has: range 1's finish goes first, or range 1 is requeued
    and read again."""
    events: list[str] = []
    ranges = iter([{"id": 1, "start": 1, "end": 100, "epoch": 1},
                   {"id": 2, "start": 101, "end": 200, "epoch": 1}])  # fmt: skip
    coordinator = ScriptedCoordinator()
    lane = "/groups/7/lanes/history"

    def next_range(body: Any) -> tuple[int, Any]:
        events.append(f"next read={body.get('read')}")
        return 200, {"range": next(ranges)}

    def release(body: Any) -> tuple[int, Any]:
        events.append("release lane")
        return 204, None

    coordinator.routes[f"{lane}/next"] = next_range
    coordinator.routes[f"{lane}/release"] = release
    positions = iter([101, None])  # range 1 read to its end, range 2 broken off
    try:
        client = Coordinator(coordinator.url, "sn_" + "a" * 40, timeout=5)
        context = Context(None, Settings(work_dir=tmp_path), Control(), Stats())  # type: ignore[arg-type]
        worker = WindowWorker("w1", client, context, lane="history")
        worker.read_lane_range = lambda *args: next(positions)  # type: ignore[method-assign]
        offer = {"group": {"id": 7, "name": "alt.binaries.x"}, "lane": "history", "epoch": 1}

        assert worker.hold_lane(offer, lane, OrderedReporter(events), NoHeartbeat()) is True  # type: ignore[arg-type]
    finally:
        coordinator.close()

    assert events == ["next read=None", "next read=1", "finish 1", "release lane"]
