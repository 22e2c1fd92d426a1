"""A lane given back and a takeover that make a range done count it as finished in the
last hour, on the node that read it (the range protocol's paths:
tests/seeding/test_finished_counts.py)."""

from __future__ import annotations

import pytest

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
