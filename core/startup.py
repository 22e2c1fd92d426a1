"""Startup of a coordinator host: migrate and create the admin login, one host at a time.

Several hosts may start together against one database (docs/several-hosts.md).
Each takes a PostgreSQL advisory lock first, so the first migrates while the
others wait, then find nothing left to do. Behind PgBouncer in transaction
mode a session lock does not hold: run `manage.py migrate` as a separate step
against the server itself and start the hosts with `serve --no-migrate`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from core.admin_login import ensure_admin
from core.sql import queries


@dataclass(frozen=True)
class Prepared:
    """What this host's start did: how many migrations it applied, the admin it made."""

    migrations_applied: int
    admin: str  # the admin login's user name
    admin_created: bool  # its password is in var/admin-password, never printed


logger = logging.getLogger(__name__)


def _tried_lock() -> bool:
    row = queries.fetchone("startup_try_lock", {})
    return bool(row and row.locked)


# How often a host waiting for another's startup asks for the lock again.
STARTUP_LOCK_POLL_SECONDS = 0.5


@contextmanager
def startup_lock() -> Iterator[None]:
    """Hold the database-wide startup lock (waits while another host holds it).

    The wait asks again every STARTUP_LOCK_POLL_SECONDS, each time in a statement
    that returns at once. Waiting inside pg_advisory_lock would hold a transaction
    open the whole time, and the holder's migration building an index CONCURRENTLY
    waits for every open transaction: a deadlock, which PostgreSQL breaks by failing
    one of the two (40P01: a host that could not start).
    """
    waited = False
    while not _tried_lock():
        if not waited:
            logger.info("another host is starting (migrating); waiting for it")
            waited = True
        time.sleep(STARTUP_LOCK_POLL_SECONDS)
    try:
        yield
    finally:
        queries.fetchone("startup_unlock", {})


# Sessions a host's web server must leave to the rest: `maintain`, a migration,
# an operator's psql.
OTHER_SESSIONS = 5


def connection_budget_problem(workers: int, threads: int) -> str | None:
    """A sentence when gunicorn's threads could open more sessions than PostgreSQL allows,
    else None. Each thread keeps a connection of its own (DB_CONN_MAX_AGE) and each
    worker two more, for the news-server slots (indexer/connection_slots.py) and
    while it takes snapshot uploads their guards (leases/upload_guard.py); past the
    server's limit new sessions are refused and calls answer 503 under load
    (docs/performance.md, "Fleet simulator")."""
    row = queries.fetchone("connection_limits", {})
    assert row is not None  # current_setting always answers
    allowed = row.max_connections - row.reserved - OTHER_SESSIONS
    needed = workers * (threads + 2)
    if needed <= allowed:
        return None
    return (
        f"{workers} workers x {threads} threads may open {needed} PostgreSQL sessions, but "
        f"the server allows {allowed} (max_connections {row.max_connections}, less "
        f"{row.reserved} reserved and {OTHER_SESSIONS} for maintain and migrations): lower "
        "WEB_WORKERS or WEB_THREADS, or raise max_connections (every host counts: "
        "docs/deploy.md, 'Database connections')."
    )


def pending_migrations() -> int:
    executor = MigrationExecutor(connection)
    return len(executor.migration_plan(executor.loader.graph.leaf_nodes()))


def prepare_database(*, verbosity: int = 1) -> Prepared:
    """Apply pending migrations and make sure an admin login exists, under the lock."""
    with startup_lock():
        pending = pending_migrations()
        if pending:
            call_command("migrate", interactive=False, verbosity=verbosity)
        username, created = ensure_admin()
    return Prepared(pending, username, created)
