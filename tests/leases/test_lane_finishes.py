"""A lane given back and a takeover that make a range done count it as finished in the
last hour, on the node that read it, and leave it with no error (the range protocol's
paths: tests/seeding/test_finished_counts.py, tests/seeding/test_done_without_error.py)."""

from __future__ import annotations

import pytest

from leases.models import GroupLane
from leases.services import force_release_lanes
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane, next_range
from tests.support.ranges import counted_on, read_to_its_end

pytestmark = pytest.mark.django_db


def test_a_lane_given_back_with_its_range_read_to_its_end_counts_it(node_client):
    group = GroupFactory()
    rng = SeedRangeFactory(group=group, start_id=1000, end_id=1999)
    node = node_client(name="window")
    lease = lease_lane(node)["lease"]
    handed = next_range(node, lease)
    read_to_its_end(node, rng.id, handed["epoch"], 1999, 80)
    assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code == 204
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
    assert counted_on(node, "window") == ({"ranges": 1, "headers": 80}, (1, 80))


def test_a_takeover_that_makes_the_range_in_work_done_counts_it_on_its_reader(
    node_client, backdate_lane, settings
):
    group = GroupFactory()
    rng = SeedRangeFactory(group=group, start_id=1000, end_id=1999)
    SeedRangeFactory(group=group, start_id=2000, end_id=2999)  # keeps the lane claimable
    node = node_client(name="gone")
    lease = lease_lane(node)["lease"]
    handed = next_range(node, lease)
    read_to_its_end(node, rng.id, handed["epoch"], 1999, 90)
    backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
    taker = node_client(name="taker")
    assert lease_lane(taker)["lease"]["group"]["id"] == group.id
    rng.refresh_from_db()
    assert (rng.status, rng.node_id) == (RangeStatus.DONE, node.node.id)
    assert counted_on(taker, "gone") == ({"ranges": 1, "headers": 90}, (1, 90))


def a_lane_reading_a_range_an_earlier_release_failed(node_client, name):
    """A range a range lease released with an error, then read to its end by a lane."""
    group = GroupFactory()
    rng = SeedRangeFactory(group=group, start_id=1000, end_id=1999)
    SeedRangeFactory(group=group, start_id=2000, end_id=2999)  # keeps the lane claimable
    ranger = node_client()
    lease = ranger.lease()
    body = {"epoch": lease["epoch"], "error": "the news server hung up"}
    assert ranger.post(f"/api/v1/ranges/{rng.id}/release", body).status_code == 204
    node = node_client(name=name)
    lane = lease_lane(node)["lease"]
    handed = next_range(node, lane)
    assert handed["id"] == rng.id
    read_to_its_end(node, rng.id, handed["epoch"], 1999, 80)
    assert SeedRange.objects.get(id=rng.id).error == "the news server hung up"
    return group, rng, node, lane


@pytest.mark.parametrize("by", ["holder", "operator"])
def test_a_lane_given_back_with_its_range_read_to_its_end_leaves_it_without_error(node_client, by):
    group, rng, node, lane = a_lane_reading_a_range_an_earlier_release_failed(node_client, "w")
    if by == "holder":
        response = node.post(lane_path(lane, "release"), {"epoch": lane["epoch"]})
        assert response.status_code == 204
    else:
        assert force_release_lanes([GroupLane.objects.get(group=group, lane="history").id]) == 1
    rng.refresh_from_db()
    assert (rng.status, rng.error) == (RangeStatus.DONE, "")


def test_a_takeover_that_makes_the_range_in_work_done_leaves_it_without_error(
    node_client, backdate_lane, settings
):
    group, rng, _, _ = a_lane_reading_a_range_an_earlier_release_failed(node_client, "gone")
    backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
    assert lease_lane(node_client())["lease"]["group"]["id"] == group.id
    rng.refresh_from_db()
    assert (rng.status, rng.error) == (RangeStatus.DONE, "")
