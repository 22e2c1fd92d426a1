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

pytestmark = pytest.mark.django_db(transaction=True)


class NoHeartbeat:
    def hold(self, *args: Any) -> None:
        pass

    def drop(self, *args: Any) -> None:
        pass


@pytest.mark.slow
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

    assert worker.hold_lane(offer, path, reporter=None, heartbeat=NoHeartbeat()) is True

    assert GroupLane.objects.get(group=group, lane="history").node_id is None
