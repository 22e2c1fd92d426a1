"""Reads that tolerate lag, on a streaming replica (DATABASE_REPLICA_URL) while it keeps up.

A read goes to the replica only where its call site says so, through
`read_tolerating_lag`: the newznab searches and feeds, the files and releases
lists of the node API, the dashboard's slow reads. Everything else, every
write (`PrimaryRouter`) and every read that must see its own write, is the
primary's.

The lag is measured as the age of the oldest write the replica has not
replayed, never as `now() - pg_last_xact_replay_timestamp()` (which grows on
an idle primary with nothing to replay). Each measure reads the primary's WAL
position and then the replica's replayed one, and the process keeps the
primary's positions of the last few minutes with the time it read them: a
replica that has replayed position P holds every write the primary had made
when it was at P or before, so its lag is at most the time since the newest
sample at or below P (0 when it has replayed all the primary had a moment
ago). A measure is kept REPLICA_CHECK_SECONDS; past REPLICA_MAX_LAG_SECONDS,
or while the replica does not answer (then for REPLICA_RETRY_SECONDS), the
reads go to the primary. A read the replica fails on the way (it went down,
or recovery cancelled the query: 40001) is read again on the primary.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, DatabaseError, connections

from core.database_faults import database_unavailable, reason, sqlstate
from core.sql import queries

logger = logging.getLogger(__name__)

PRIMARY = DEFAULT_DB_ALIAS
REPLICA = "replica"  # the alias coordinator/settings.py gives DATABASE_REPLICA_URL
RECOVERY_CONFLICT = "40001"  # "canceling statement due to conflict with recovery"
T = TypeVar("T")


@dataclass(frozen=True)
class ReplicaState:
    """The replica as this process last measured it."""

    configured: bool
    reachable: bool = False
    lag_seconds: float | None = None  # None: not measured, or no bound known yet
    serving: bool = False  # the reads that tolerate lag go to it
    problem: str = ""  # why not, in a few words


NOT_CONFIGURED = ReplicaState(configured=False, problem="no DATABASE_REPLICA_URL")
BEING_MEASURED = ReplicaState(configured=True, problem="its first measure is under way")


class _Measures:
    """One process's measures (threads share them; each measures on its own connections)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.samples: deque[tuple[float, int]] = deque()  # (monotonic, primary position)
        self.state: ReplicaState | None = None
        self.measured_at = 0.0
        self.down_until = 0.0
        self.measuring = False  # one thread measures; the others keep the last state

    def forget(self) -> None:
        with self.lock:
            self.samples.clear()
            self.state, self.measured_at, self.down_until = None, 0.0, 0.0
            self.measuring = False


_measures = _Measures()


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


def replica_state() -> ReplicaState:
    """The replica's state, measured at most every REPLICA_CHECK_SECONDS per process.

    One thread measures at a time; the others take the last state meanwhile (the
    primary's, before the first measure), so a replica that does not answer costs
    one request its connect timeout, not every request that arrives in the while.
    """
    if not replica_configured():
        return NOT_CONFIGURED
    now = time.monotonic()
    with _measures.lock:
        fresh = now - _measures.measured_at < settings.REPLICA_CHECK_SECONDS
        if _measures.state is not None and (fresh or now < _measures.down_until):
            return _measures.state
        if _measures.measuring:
            return _measures.state or BEING_MEASURED
        _measures.measuring = True
    state = None
    try:
        state = _measure(now)
        return state
    finally:
        with _measures.lock:  # the state and the end of the measure seen together
            _measures.measuring = False
            if state is not None:
                _measures.state, _measures.measured_at = state, now
                if not state.reachable:
                    _measures.down_until = now + settings.REPLICA_RETRY_SECONDS


def _measure(now: float) -> ReplicaState:
    primary = queries.fetchone("primary_wal_position", {}, using=PRIMARY)
    try:
        replica = queries.fetchone("replica_wal_position", {}, using=REPLICA)
    except DatabaseError as exc:
        _close_replica()
        logger.warning("the replica does not answer (%s): reads on the primary", reason(exc))
        return ReplicaState(configured=True, problem=f"not answering ({reason(exc)})")
    assert primary is not None and replica is not None
    lag = _lag_seconds(now, int(primary.position), int(replica.position))
    limit = settings.REPLICA_MAX_LAG_SECONDS
    serving = lag is not None and lag <= limit
    problem = "" if serving else f"more than {limit:g} s behind the primary"
    return ReplicaState(True, True, lag, serving, problem)


def _lag_seconds(now: float, primary_position: int, replayed: int) -> float | None:
    """At most how many seconds of the primary's writes the replica misses (see the module)."""
    with _measures.lock:
        samples = _measures.samples
        samples.append((now, primary_position))
        keep = max(settings.REPLICA_MAX_LAG_SECONDS, settings.REPLICA_CHECK_SECONDS) * 2 + 10
        while len(samples) > 1 and samples[1][0] < now - keep:
            samples.popleft()
        held = [at for at, position in samples if position <= replayed]
        if held:
            return round(now - max(held), 3)
        # Behind every sample: at least as old as the oldest one; unknown if that is recent.
        oldest = samples[0][0]
        return None if now - oldest < settings.REPLICA_MAX_LAG_SECONDS else now - oldest


def _close_replica() -> None:
    try:
        connections[REPLICA].close()
    except DatabaseError:
        connections[REPLICA].connection = None


def _replica_usable() -> bool:
    """Whether this thread's replica connection is open and still answers."""
    connection = connections[REPLICA]
    return connection.connection is not None and connection.is_usable()


def reader() -> str:
    """The alias a read that tolerates lag goes to now: the replica's or the primary's."""
    return REPLICA if replica_state().serving else PRIMARY


def read_tolerating_lag(read: Callable[[str], T]) -> T:
    """`read(alias)` on the replica while it keeps up, else (or if it fails there) on the
    primary. `read` must return what it read, not a lazy query set."""
    using = reader()
    if using == PRIMARY:
        return read(PRIMARY)
    try:
        return read(REPLICA)
    except DatabaseError as exc:
        # A search reads a little on the primary too (the terms' statistics): a
        # failure there is the primary's, for the caller's 503, not the replica's.
        replicas_fault = database_unavailable(exc) and not _replica_usable()
        if not (replicas_fault or sqlstate(exc) == RECOVERY_CONFLICT):
            raise
        logger.warning("a read failed on the replica (%s): read on the primary", reason(exc))
        _close_replica()
        with _measures.lock:
            _measures.state = ReplicaState(configured=True, problem=reason(exc))
            _measures.measured_at = time.monotonic()
            _measures.down_until = _measures.measured_at + settings.REPLICA_RETRY_SECONDS
        return read(PRIMARY)


def forget_measures() -> None:
    """A new process's state (tests, and after the settings change)."""
    _measures.forget()


class PrimaryRouter:
    """Every write goes to the primary, even of a row read from the replica, and only the
    primary is migrated. Reads go where their call site says (default: the primary)."""

    def db_for_read(self, model: type, **hints: Any) -> str | None:
        return None  # the instance's own database, else the primary

    def db_for_write(self, model: type, **hints: Any) -> str:
        return PRIMARY

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # the same rows, a moment apart

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == PRIMARY
