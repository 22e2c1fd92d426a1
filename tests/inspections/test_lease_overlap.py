"""Two lease calls of one node that overlap still hold the node to its cap
(INSPECT_LEASES_PER_NODE): the second counts the node's live leases only once the
first has committed its claim."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest
from django.db import connection, connections

from core.errors import TooManyLeases
from inspections import services
from inspections.models import Inspection
from seeding.leasing import lease_rate_key
from tests.support.factories import NodeFactory

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_on_locks(dsn: dict) -> int:
    """Backends of this database waiting on a lock (a row's, a transaction's, an advisory one)."""
    with psycopg.connect(**dsn, autocommit=True) as watcher:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def test_two_overlapping_calls_of_one_node_hold_it_to_its_cap(planned, settings):
    settings.INSPECT_LEASES_PER_NODE = 4
    settings.LEASE_RATE_PER_MINUTE = 0
    for n in range(10):
        planned(f"{n}8f7d6e5c4b3", date=1_700_000_000 + n * 1000)
    node = NodeFactory()
    dsn = connection.get_connection_params()
    handed: dict[int, object] = {}

    def call(index: int) -> None:
        try:
            handed[index] = len(services.lease_inspection(node.id, 4).leases)
        except TooManyLeases as exc:  # the right answer for the second call
            handed[index] = type(exc).__name__
        finally:
            connections.close_all()

    # A second connection holds the node's rate-bucket row, so both calls start their
    # statements and wait; released, they run one after the other.
    with psycopg.connect(**dsn) as blocker:
        blocker.execute(
            "INSERT INTO rate_bucket (key, window_start, hits) VALUES (%s, now(), 0)"
            " ON CONFLICT (key) DO UPDATE SET hits = rate_bucket.hits",
            [lease_rate_key(node.id)],
        )
        threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(2)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while waiting_on_locks(dsn) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert waiting_on_locks(dsn) == 2, f"both calls should wait behind the blocker: {handed}"
        blocker.commit()
    for thread in threads:
        thread.join(30)
    live = Inspection.objects.filter(status="leased", node_id=node.id).count()
    assert live == 4, f"the cap is 4, the node holds {live}: {handed}"
    assert sorted(map(str, handed.values())) == ["4", "TooManyLeases"], handed
