"""Every path that makes a range done counts it as finished in the last hour, on the node
that read it: finish, a release of a range read to its end, the quiet-lease sweep (the
lanes' paths: tests/leases/test_lane_finishes.py; docs/api.md, Status)."""

from __future__ import annotations

import pytest

from seeding import maintenance
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory
from tests.support.ranges import counted_on, read_to_its_end

pytestmark = pytest.mark.django_db


def test_a_release_of_a_range_read_to_its_end_counts_as_finished(node_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client(name="releaser")
    lease = node.lease()
    read_to_its_end(node, rng.id, lease["epoch"], 100, 60)
    assert (
        node.post(f"/api/v1/ranges/{rng.id}/release", {"epoch": lease["epoch"]}).status_code == 204
    )
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
    assert counted_on(node, "releaser") == ({"ranges": 1, "headers": 60}, (1, 60))


def test_the_quiet_lease_sweep_counts_a_range_read_to_its_end(node_client, backdate, settings):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client(name="quiet")
    lease = node.lease()
    read_to_its_end(node, rng.id, lease["epoch"], 100, 70)
    backdate(rng.id, settings.LEASE_TTL_SECONDS + 1)
    assert maintenance.run_task(maintenance.RETIRE)
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
    assert counted_on(node, "quiet") == ({"ranges": 1, "headers": 70}, (1, 70))


def test_a_finish_counts_once(node_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client(name="finisher")
    lease = node.lease()
    read_to_its_end(node, rng.id, lease["epoch"], 100, 50)
    assert (
        node.post(f"/api/v1/ranges/{rng.id}/finish", {"epoch": lease["epoch"]}).status_code == 204
    )
    assert counted_on(node, "finisher") == ({"ranges": 1, "headers": 50}, (1, 50))
