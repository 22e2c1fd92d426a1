"""A cap on news-server connections across every worker of every coordinator host.

Providers cap connections per account; hosts times workers times `connections` may
pass it. Each open connection holds a slot: a PostgreSQL session advisory
lock taken on a database session of this process's own (never a request's
connection, which Django closes and reuses). A caller waits for a free slot
up to NEWS_POOL_WAIT_SECONDS, then gets PoolExhausted (the API answers 503
`unavailable` with Retry-After). A process that dies closes its session and
frees its slots. Advisory locks are per session: behind PgBouncer this needs
session mode (docs/several-hosts.md).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from django.db import connections

from indexer.sql import queries
from usenet.nntp import PoolExhausted

POLL_SECONDS = 0.2


class DatabaseSlots:
    """`cap` slots shared through PostgreSQL; a gate for NNTPPool. Thread-safe."""

    def __init__(self, cap: int, alias: str = "default") -> None:
        if cap < 1:
            raise ValueError(f"a connection cap must be at least 1, not {cap}")
        self.cap = cap
        self._alias = alias
        self._lock = threading.Lock()
        self._session: Any = None
        self._held: set[int] = set()

    def __repr__(self) -> str:
        return f"<DatabaseSlots {len(self._held)}/{self.cap} held here>"

    def acquire(self, timeout: float) -> int:
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                row = (
                    self._session_for_slots()
                    .execute(
                        queries["take_connection_slot"],
                        {"cap": self.cap, "held": sorted(self._held)},
                    )
                    .fetchone()
                )
                if row is not None:
                    self._held.add(row[0])
                    return int(row[0])
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise PoolExhausted(
                    f"all {self.cap} news-server connections (NNTP_MAX_CONNECTIONS) "
                    f"stayed in use for {timeout:g} seconds"
                )
            time.sleep(min(POLL_SECONDS, remaining))

    def release(self, slot: int) -> None:
        with self._lock:
            if slot not in self._held:
                return
            self._held.discard(slot)
            if self._session is not None and not self._session.closed:
                self._session.execute(queries["free_connection_slot"], {"slot": slot})

    def close(self) -> None:
        """End the session: every slot this process holds is free again."""
        with self._lock:
            if self._session is not None:
                self._session.close()
            self._session = None
            self._held.clear()

    def _session_for_slots(self) -> Any:
        if self._session is None or self._session.closed:
            # A session lost with its locks: the slots it held are free for others now.
            self._held.clear()
            wrapper = connections[self._alias]
            self._session = wrapper.get_new_connection(wrapper.get_connection_params())
            self._session.autocommit = True
        return self._session
