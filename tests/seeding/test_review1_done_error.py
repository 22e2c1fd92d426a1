"""Review (review1): a range that ends done did not fail, whichever path made it done.

finish clears the error an earlier release left (docs/api.md, finish); a release of a
range reported to its end also makes it done, and keeps that error.
"""

from __future__ import annotations

import pytest

from seeding.models import RangeStatus, SeedRange
from tests.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db


def test_a_release_that_makes_the_range_done_clears_an_earlier_error(node_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    first = node_client()
    lease = first.lease()
    body = {"epoch": lease["epoch"], "error": "the news server hung up"}
    assert first.post(f"/api/v1/ranges/{rng.id}/release", body).status_code == 204
    second = node_client()
    again = second.lease()
    assert again["id"] == rng.id
    batch = {"epoch": again["epoch"], "next": 101, "headers": 10}
    assert second.post(f"/api/v1/ranges/{rng.id}/batch", batch).status_code == 200
    release = {"epoch": again["epoch"]}
    assert second.post(f"/api/v1/ranges/{rng.id}/release", release).status_code == 204
    done = SeedRange.objects.get(id=rng.id)
    assert (done.status, done.error) == (RangeStatus.DONE, "")
