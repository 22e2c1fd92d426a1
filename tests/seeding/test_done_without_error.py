"""A range that ends done did not fail: whichever path made it done, it carries no error
(docs/api.md, release and finish). An error an earlier release left goes, and so does the
error of a release that finds the range read to its end; the database refuses a done range
with an error (the lanes' paths: tests/leases/test_lane_finishes.py)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from seeding import maintenance
from seeding.models import RangeStatus, SeedRange
from seeding.services import end_node_leases
from tests.seeding.test_finished_counts import read_to_its_end
from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db

EARLIER = "the news server hung up"


def leased_after_a_failed_release(node_client):
    """A range leased to a second node after the first released it with an error."""
    rng = SeedRangeFactory(start_id=1, end_id=100)
    first = node_client()
    lease = first.lease()
    body = {"epoch": lease["epoch"], "error": EARLIER}
    assert first.post(f"/api/v1/ranges/{rng.id}/release", body).status_code == 204
    assert SeedRange.objects.get(id=rng.id).error == EARLIER
    second = node_client()
    again = second.lease()
    assert again["id"] == rng.id
    return rng, second, again


def done_and_error(rng):
    done = SeedRange.objects.get(id=rng.id)
    return done.status, done.error


@pytest.mark.parametrize("own_error", [None, "connection reset after the last article"])
def test_a_release_that_makes_the_range_done_clears_every_error(node_client, own_error):
    rng, node, lease = leased_after_a_failed_release(node_client)
    read_to_its_end(node, rng.id, lease["epoch"], 100, 10)
    release = {"epoch": lease["epoch"], **({"error": own_error} if own_error else {})}
    assert node.post(f"/api/v1/ranges/{rng.id}/release", release).status_code == 204
    assert done_and_error(rng) == (RangeStatus.DONE, "")


def test_the_quiet_lease_sweep_that_makes_the_range_done_clears_the_error(
    node_client, backdate, settings
):
    rng, node, lease = leased_after_a_failed_release(node_client)
    read_to_its_end(node, rng.id, lease["epoch"], 100, 10)
    backdate(rng.id, settings.LEASE_TTL_SECONDS + 5)
    assert maintenance.retire_quiet_ranges() == 1
    assert done_and_error(rng) == (RangeStatus.DONE, "")


def test_a_disabled_nodes_range_read_to_its_end_is_done_without_the_error(node_client):
    rng, node, lease = leased_after_a_failed_release(node_client)
    read_to_its_end(node, rng.id, lease["epoch"], 100, 10)
    end_node_leases([node.node.id])
    assert done_and_error(rng) == (RangeStatus.DONE, "")


def test_the_database_refuses_a_done_range_with_an_error():
    rng = SeedRangeFactory(start_id=1, end_id=100)
    with pytest.raises(IntegrityError, match="seed_range_done_without_error"):
        with transaction.atomic():
            SeedRange.objects.filter(id=rng.id).update(status="done", error=EARLIER)
    SeedRange.objects.filter(id=rng.id).update(status="done", error="")
    assert done_and_error(rng) == (RangeStatus.DONE, "")
