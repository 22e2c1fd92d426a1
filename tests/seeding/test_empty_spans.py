"""A range with nothing left (resume point past its end) is never handed out: the places
that would queue it so make it done, and the database refuses a queued one (an index to
sweep them would name next_id and make every batch a non-HOT update)."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db


def test_the_database_refuses_a_queued_range_with_nothing_left():
    rng = SeedRangeFactory(start_id=1, end_id=100)
    with pytest.raises(IntegrityError, match="seed_range_queued_has_articles_left"):
        with transaction.atomic():
            SeedRange.objects.filter(id=rng.id).update(next_id=101)
    SeedRange.objects.filter(id=rng.id).update(next_id=100)  # one article left is fine
    assert SeedRange.objects.get(id=rng.id).status == RangeStatus.QUEUED


def test_no_index_names_the_columns_heartbeats_and_batches_write():
    # A column an index names (as a key, in an expression or in its condition)
    # makes every update of it a non-HOT one: a new entry in every index.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.indexrelid::regclass::text, a.attname"
            "  FROM pg_index AS i"
            "  JOIN pg_attribute AS a ON a.attrelid = i.indrelid AND a.attnum > 0"
            " WHERE i.indrelid = 'seed_range'::regclass"
            "   AND a.attname IN ('heartbeat_at', 'next_id')"
            "   AND (a.attnum = ANY(i.indkey::int2[])"
            "        OR pg_get_expr(i.indpred, i.indrelid) ~ ('\\m' || a.attname || '\\M')"
            "        OR pg_get_expr(i.indexprs, i.indrelid) ~ ('\\m' || a.attname || '\\M'))"
        )
        assert cursor.fetchall() == []


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
