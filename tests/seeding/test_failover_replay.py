"""Calls whose answer a failover lost: a replayed batch changes nothing twice, a lease expires.

The database fault is a real one: every session of the coordinator on the test
database is terminated (`pg_terminate_backend`), as a primary that went away
leaves them. The chaos suite does the same across a Patroni failover with real
agents; these are the two rules it rests on, one call at a time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from catalog.models import CatalogFile
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory
from tests.support.sessions import side_session

pytestmark = pytest.mark.django_db(transaction=True)

SEGMENTS = [[1, 1000, "<r1@example.com>", 700000], [2, 1001, "<r2@example.com>", 700000]]
BATCH = {
    "next": 2500,
    "headers": 1500,
    "files": [
        {
            "subject": '[01/12] - "replayed.part01.rar" yEnc (1/2)',
            "poster": "someone <a@b.c>",
            "date": 1700000000,
            "total": 2,
            "segments": SEGMENTS,
        }
    ],
    "fragments": [],
}


def lose_the_database() -> None:
    """Terminate the coordinator's sessions, as a primary lost under them does."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    with side_session() as session:
        session.execute("SELECT pg_terminate_backend(%s)", [pid])


def catalog_state(range_id: int) -> tuple[Any, ...]:
    seed_range = SeedRange.objects.get(id=range_id)
    files = list(CatalogFile.objects.values_list("name", "parts", "message_ids"))
    return seed_range.next_id, seed_range.headers, seed_range.files, files


def test_a_batch_committed_whose_answer_was_lost_replays_after_a_failover_and_changes_nothing(
    node_client: Callable[..., Any],
) -> None:
    SeedRangeFactory(start_id=1000, end_id=5999)
    node = node_client()
    lease = node.lease()
    batch = {**BATCH, "epoch": lease["epoch"]}
    path = f"/api/v1/ranges/{lease['id']}/batch"
    assert node.post(path, batch).status_code == 200  # committed; say its answer was lost
    committed = catalog_state(lease["id"])
    parts, ids = [1, 2], ["<r1@example.com>", "<r2@example.com>"]
    assert committed == (2500, 1500, 1, [("replayed.part01.rar", parts, ids)])

    lose_the_database()
    first = node.post(path, batch)  # the agent's replay meets the failover
    assert first.status_code == 503 and first["Retry-After"]
    again = node.post(path, batch)  # and replays it once more after Retry-After
    assert again.status_code == 200, again.content
    assert again.json()["next"] == 2500
    assert catalog_state(lease["id"]) == committed  # nothing counted or stored twice


def test_a_lease_whose_answer_was_lost_expires_by_its_ttl_and_goes_to_another_node(
    node_client: Callable[..., Any], backdate: Callable[[int, int], None]
) -> None:
    SeedRangeFactory(start_id=1000, end_id=5999)
    other = node_client()
    lost = node_client().lease()  # committed; the node never heard the answer
    lose_the_database()
    assert other.post("/api/v1/ranges/lease").status_code == 503  # the failover
    assert other.lease() is None  # the lost lease still holds the range within its TTL
    backdate(lost["id"], settings.LEASE_TTL_SECONDS + 1)
    taken = other.lease()
    assert taken is not None and taken["id"] == lost["id"] and taken["epoch"] > lost["epoch"]
    assert SeedRange.objects.get(id=lost["id"]).status == RangeStatus.LEASED
