"""Two lease calls of one node that overlap: both start while a second connection
holds the node's rate-bucket row, then run one after the other once it lets go."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psycopg
from django.db import connection, connections

from core.errors import TooManyLeases
from seeding.leasing import lease_rate_key


def waiting_on_locks(dsn: dict) -> int:
    """Backends of this database waiting on a lock (a row's, a transaction's, an advisory one)."""
    with psycopg.connect(**dsn, autocommit=True) as watcher:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        ).fetchone()
    return int(row[0]) if row else 0


def overlapping_calls(node_id: int, call: Callable[[], int]) -> list[object]:
    """What two overlapping `call`s answered (the leases each handed out, or
    "TooManyLeases"), in order of the answer."""
    dsn = connection.get_connection_params()
    answered: list[object] = []

    def run() -> None:
        try:
            answered.append(call())
        except TooManyLeases as exc:  # the right answer for a call at the cap
            answered.append(type(exc).__name__)
        finally:
            connections.close_all()

    with psycopg.connect(**dsn) as blocker:
        blocker.execute(
            "INSERT INTO rate_bucket (key, window_start, hits) VALUES (%s, now(), 0)"
            " ON CONFLICT (key) DO UPDATE SET hits = rate_bucket.hits",
            [lease_rate_key(node_id)],
        )
        threads = [threading.Thread(target=run, daemon=True) for _ in range(2)]
        for thread in threads:
            thread.start()
        deadline = time.monotonic() + 20
        while waiting_on_locks(dsn) < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert waiting_on_locks(dsn) == 2, f"both calls should wait behind the blocker: {answered}"
        blocker.commit()
    for thread in threads:
        thread.join(30)
    return answered
