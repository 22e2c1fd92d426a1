"""A range with nothing left (resume point past its end) is never handed out: the places
that leave it so make it done, the sweep makes stragglers done, the claim skips them."""

from __future__ import annotations

import pytest

from seeding import maintenance
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db


def read_to_end(rng):
    SeedRange.objects.filter(id=rng.id).update(next_id=rng.end_id + 1)


def test_the_range_claim_never_hands_out_an_empty_span(node_client):
    empty = SeedRangeFactory(start_id=1, end_id=100)
    read_to_end(empty)
    fresh = SeedRangeFactory(start_id=101, end_id=200)
    node = node_client()
    lease = node.lease()
    assert lease["id"] == fresh.id
    assert lease["start"] <= lease["end"]
    assert node.lease() is None


def test_the_sweep_makes_queued_ranges_read_to_their_end_done():
    empty = SeedRangeFactory(start_id=1, end_id=100)
    read_to_end(empty)
    left = SeedRangeFactory(start_id=101, end_id=200)
    assert maintenance.retire_quiet_ranges() == 1
    empty.refresh_from_db()
    assert empty.status == RangeStatus.DONE and empty.done_at is not None
    assert SeedRange.objects.get(id=left.id).status == RangeStatus.QUEUED


def test_releasing_a_range_reported_to_its_end_makes_it_done(node_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client()
    lease = node.lease()
    body = {"epoch": lease["epoch"], "next": 101, "headers": 100}
    assert node.post(f"/api/v1/ranges/{rng.id}/batch", body).status_code == 200
    response = node.post(f"/api/v1/ranges/{rng.id}/release", {"epoch": lease["epoch"]})
    assert response.status_code in (200, 204)
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
    assert node.lease() is None


def test_a_disabled_nodes_range_reported_to_its_end_is_done(node_client):
    from seeding.services import end_node_leases

    rng = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client()
    lease = node.lease()
    body = {"epoch": lease["epoch"], "next": 101, "headers": 100}
    assert node.post(f"/api/v1/ranges/{rng.id}/batch", body).status_code == 200
    end_node_leases([node.node.id])
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE


def test_requeueing_a_done_range_queues_it_only_from_its_start():
    from seeding.services import requeue_ranges

    rng = SeedRangeFactory(start_id=1, end_id=100, status=RangeStatus.DONE, next_id=101)
    assert requeue_ranges([rng.id]) == 0
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
    assert requeue_ranges([rng.id], from_start=True) == 1
    rng.refresh_from_db()
    assert (rng.status, rng.next_id) == (RangeStatus.QUEUED, 1)
