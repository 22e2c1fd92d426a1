"""A host waiting for another's startup never deadlocks with its migration.

The host that holds the startup lock migrates, and a migration may build an
index CONCURRENTLY, which waits for every transaction open in the database.
A host waiting for the lock inside pg_advisory_lock held such a transaction:
a deadlock PostgreSQL broke by failing one of them (40P01), so two hosts
started together once failed on a fresh database (tests/e2e/test_startup.py).
"""

from __future__ import annotations

import threading

import psycopg
import pytest
from django.db import connection, connections

from core import startup
from tests.support.fleet import server_params

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_host_waiting_for_the_lock_lets_the_holders_concurrent_index_build_finish(
    monkeypatch,
):
    monkeypatch.setattr(startup, "STARTUP_LOCK_POLL_SECONDS", 0.05)
    params = {**server_params(), "dbname": connection.settings_dict["NAME"]}
    got: list[str] = []

    def second_host() -> None:
        try:
            with startup.startup_lock():
                got.append("locked")
        except Exception as exc:  # what the waiting host met, if anything
            got.append(repr(exc))
        finally:
            connections.close_all()

    with psycopg.connect(autocommit=True, **params) as holder:
        holder.execute("SET deadlock_timeout = '100ms'")
        holder.execute("SELECT pg_advisory_lock(hashtext('core.startup')::bigint)")
        holder.execute("CREATE TABLE startup_lock_probe (n int)")
        waiter = threading.Thread(target=second_host)
        waiter.start()
        try:
            # Until the second host is waiting for the lock.
            for _ in range(200):
                waiting = holder.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE query LIKE %s AND pid <> "
                    "pg_backend_pid()",
                    ["%core.startup%"],
                ).fetchone()
                if waiting and waiting[0]:
                    break
                threading.Event().wait(0.02)
            # The migration's step: it waits for every open transaction, so a host
            # blocked in pg_advisory_lock made this a deadlock (one side failed).
            holder.execute(
                "CREATE INDEX CONCURRENTLY startup_lock_probe_idx ON startup_lock_probe (n)"
            )
            assert got == []  # still waiting, not failed
        finally:
            holder.execute("SELECT pg_advisory_unlock(hashtext('core.startup')::bigint)")
            waiter.join(timeout=30)
            holder.execute("DROP TABLE IF EXISTS startup_lock_probe")
    assert got == ["locked"]
