"""Group leases over the API for tests: lease a lane, take its next range, hold one."""

from __future__ import annotations

from typing import Any

from leases import services
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory

GROUP = "alt.binaries.big"
ARTICLE = 1_500  # of the lane's range, 1,000..9,999


def lease_lane(client: Any, lane: str = "history") -> dict[str, Any]:
    response = client.post("/api/v1/groups/lease", {"lane": lane})
    assert response.status_code == 200, response.content
    return response.json()


def lane_path(lease: dict[str, Any], action: str) -> str:
    return f"/api/v1/groups/{lease['group']['id']}/lanes/{lease['lane']}/{action}"


def next_range(client: Any, lease: dict[str, Any]) -> dict[str, Any] | None:
    response = client.post(lane_path(lease, "next"), {"epoch": lease["epoch"]})
    assert response.status_code == 200, response.content
    return response.json()["range"]


def held_lane():
    """A history lane of GROUP held by a new node, and its snapshot upload's path."""
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group, start_id=1_000, end_id=9_999)
    node = NodeFactory()
    offer = services.lease_lane(node.id, "history")
    assert offer.lease is not None
    # Handed out: a window holds only articles of the ranges its lane handed out.
    assert services.next_lane_range(node.id, group.id, "history", offer.lease.epoch)
    path = f"/api/v1/groups/{group.id}/lanes/history/snapshot?epoch={offer.lease.epoch}"
    return node, path
