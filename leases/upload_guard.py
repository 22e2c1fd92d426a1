"""One snapshot upload per lane at a time, across every worker of every coordinator host.

Each upload may be gigabytes; a holder that sent many at once (or a resend
overlapping its first attempt) could fill the disk. An upload holds a
PostgreSQL session advisory lock keyed by the lane for as long as it streams.
The locks of a process's uploads live on one database session of the
process's own (never a request's connection, which runs the upload's
transactions and which Django closes and reuses), opened with the first
upload and closed with the last, so a worker needs one session more than its
threads, as for the news-server slots (core/startup.py counts it).

The lock lives in the database every host shares, so it holds across hosts,
and it cannot stay stuck: a worker that dies closes its session, and a host
that dies without closing it (power, network) leaves the session idle, which
PostgreSQL ends after ``IDLE_SECONDS`` (``idle_session_timeout``, set on that
session only). Uploads touch the session at least every ``KEEP_SECONDS``
while bytes arrive, so only a process whose uploads all stall loses it, and
they then fail rather than race a second upload. Advisory locks are per
session: behind PgBouncer this needs session mode (docs/several-hosts.md).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from django.db import connections

from core.errors import Unavailable, UploadInProgress

from .sql import queries

log = logging.getLogger(__name__)

IDLE_SECONDS = 120.0  # an idle guard session ends after this (a host that died)
KEEP_SECONDS = 10.0  # uploads touch their session at least this often
RETRY_SECONDS = 10  # Retry-After of an upload refused while another one runs
_KEY_SPACE = 2**31 - 1  # the lock's second key is an int; lane ids past it share keys


def _busy() -> UploadInProgress:
    return UploadInProgress(
        "Another upload of this lane's snapshot is still streaming; one runs at a "
        f"time. Send it again after Retry-After ({RETRY_SECONDS} s).",
        retry_after=RETRY_SECONDS,
    )


def _lost() -> Unavailable:
    return Unavailable(
        "The upload stalled and lost its hold on the lane (another upload may have "
        "begun since); send the snapshot again."
    )


class UploadGuard:
    """One lane's lock, held by an upload until it ends."""

    def __init__(self, guards: UploadGuards, key: int, generation: int) -> None:
        self._guards, self.key, self.generation = guards, key, generation

    def keep(self) -> None:
        """Touch the session now and then while the upload streams; Unavailable if it was lost."""
        self._guards.keep(self)

    @property
    def session(self) -> Any:
        """The guards' session: a thread that is not the request's may read on it."""
        return self._guards.session


class UploadGuards:
    """The upload locks of this process, on one session of its own while any is held."""

    def __init__(self, idle_seconds: float = IDLE_SECONDS) -> None:
        self._idle_seconds = idle_seconds
        self._keep_every = min(KEEP_SECONDS, idle_seconds / 4)
        self._lock = threading.Lock()
        self._session: Any = None
        self._held: set[int] = set()
        self._generation = 0  # a new session: the locks of the old one are gone
        self._kept = 0.0

    @property
    def session(self) -> Any:
        return self._session

    def take(self, lane_id: int) -> UploadGuard:
        """The lane's lock; UploadInProgress if an upload here or on another host holds it."""
        key = lane_id % _KEY_SPACE
        with self._lock:
            if key in self._held and self._alive():
                raise _busy()
            try:
                taken = self._on_session(queries["take_upload_guard"], {"key": key})
            except Exception as exc:
                self._drop()
                raise Unavailable(
                    "The coordinator could not take the lane's upload guard in the database; "
                    "try again later."
                ) from exc
            if not taken:
                self._close_if_unused()
                raise _busy()
            self._held.add(key)
            return UploadGuard(self, key, self._generation)

    def keep(self, guard: UploadGuard) -> None:
        with self._lock:
            if guard.generation != self._generation:
                raise _lost()
            now = time.monotonic()
            if now - self._kept < self._keep_every:
                return
            if not self._alive():
                log.warning("snapshot upload guard session lost (lane key %s)", guard.key)
                raise _lost()
            self._kept = now

    def release(self, guard: UploadGuard) -> None:
        with self._lock:
            if guard.generation != self._generation or guard.key not in self._held:
                return  # its session is gone, and the lock with it
            self._held.discard(guard.key)
            try:
                self._session.execute(queries["free_upload_guard"], {"key": guard.key})
            except Exception:  # the session went away: so did the lock
                self._drop()
            self._close_if_unused()

    def _on_session(self, query: str, params: dict[str, Any]) -> bool:
        if self._session is None or self._session.closed:
            self._open()
        return bool(self._session.execute(query, params).fetchone()[0])

    def _alive(self) -> bool:
        """Whether the session still answers; when not, its locks are forgotten."""
        try:
            self._session.execute(queries["keep_upload_guard"])
        except Exception:
            self._drop()
            return False
        return True

    def _open(self) -> None:
        wrapper = connections["default"]
        session = wrapper.get_new_connection(wrapper.get_connection_params())
        session.autocommit = True
        session.execute(
            queries["prepare_upload_guard"], {"idle_ms": int(self._idle_seconds * 1000)}
        )
        self._session, self._held = session, set()
        self._generation += 1
        self._kept = time.monotonic()

    def _drop(self) -> None:
        if self._session is not None:
            with suppress(Exception):
                self._session.close()
        self._session, self._held = None, set()
        self._generation += 1

    def _close_if_unused(self) -> None:
        if not self._held and self._session is not None:
            with suppress(Exception):
                self._session.close()
            self._session = None


# This process's guards (sessions are opened per process, after gunicorn forks).
GUARDS = UploadGuards()


@contextmanager
def one_upload(lane_id: int, guards: UploadGuards = GUARDS) -> Iterator[UploadGuard]:
    """Hold the lane's upload guard for the block; UploadInProgress (429) if another holds it."""
    guard = guards.take(lane_id)
    try:
        yield guard
    finally:
        guards.release(guard)
