"""One snapshot upload per lane and epoch at a time, across every worker of every host.

Each upload may be gigabytes; a holder that sent many at once (or a resend
overlapping its first attempt) could fill the disk. An upload holds a
PostgreSQL session advisory lock keyed by the lane and the holder's epoch for
as long as it streams. The key names the epoch so that a holder fenced off
mid-upload never locks out the lane's next holder: its upload keeps only its
own epoch's lock, and is ended (409) once the keeper below finds its epoch
stale, at its next chunk. A node that cycles epochs (release, lease again) to
run uploads side by side gets each older one ended the same way.

The locks of a process's uploads live on one database session of the
process's own (never a request's connection, which runs the upload's
transactions and which Django closes and reuses), opened with the first
upload and closed with the last, so a worker needs one session more than its
threads, as for the news-server slots (core/startup.py counts it).

The lock lives in the database every host shares, so it holds across hosts,
and it cannot stay stuck: a worker that dies closes its session, and a host
that dies without closing it (power, network) leaves the session idle, which
PostgreSQL ends after ``IDLE_SECONDS`` (``idle_session_timeout``, set on that
session only). While the session is open a keeper thread touches it every
``KEEP_SECONDS`` whether or not bytes arrive (an upload slower than the idle
timeout allows is the body deadlines' business, not the lock's), and checks
each upload's holder and epoch. An upload whose session was lost fails (503)
rather than race a second one. Advisory locks are per session: behind
PgBouncer this needs session mode (docs/several-hosts.md).
"""

from __future__ import annotations

import logging
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

from django.db import connections

from core.errors import LeaseLost, Unavailable, UploadInProgress

from .sql import queries

log = logging.getLogger(__name__)

IDLE_SECONDS = 120.0  # an idle guard session ends after this (a host that died)
KEEP_SECONDS = 10.0  # the keeper touches the session, and checks the holders, this often
RETRY_SECONDS = 10  # Retry-After of an upload refused while another one runs


def guard_key(lane_id: int, epoch: int) -> int:
    """The lock's second key (an int4) for a lane at an epoch. Two lanes or epochs
    may share one (a hash): then one upload waits for the other, nothing worse."""
    return zlib.crc32(f"{lane_id}/{epoch}".encode()) - 2**31


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


def _fenced(holder: Holder) -> LeaseLost:
    return LeaseLost(
        f"The lane's lease at epoch {holder.epoch} ended while its snapshot was uploading "
        "(another node holds the lane, or a newer epoch): the upload was stopped and "
        "nothing was kept; drop the window and lease again."
    )


@dataclass(frozen=True)
class Holder:
    """Whose upload a guard is: the lane row, its holder and epoch when it began."""

    lane_id: int
    node_id: int
    epoch: int


class UploadGuard:
    """One lane's lock at one epoch, held by an upload until it ends."""

    def __init__(self, guards: UploadGuards, holder: Holder, key: int, generation: int) -> None:
        self._guards, self.holder, self.key, self.generation = guards, holder, key, generation
        self.fenced = False  # the keeper found the holder's epoch stale

    def keep(self) -> None:
        """Called with every chunk: LeaseLost once the holder was fenced off,
        Unavailable once the guard's session was lost. No query of its own
        while the keeper runs."""
        self._guards.keep(self)

    @property
    def session(self) -> Any:
        """The guards' session (shared by this process's uploads)."""
        return self._guards.session

    def fetchone(self, query: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
        """One row of `query` on the guards' session, which a thread that is not
        the request's may use; Unavailable when the session is gone."""
        return self._guards.fetchone(self, query, params)


class UploadGuards:
    """The upload locks of this process, on one session of its own while any is held."""

    def __init__(
        self,
        idle_seconds: float = IDLE_SECONDS,
        *,
        keep_seconds: float = KEEP_SECONDS,
        keeper: bool = True,
    ) -> None:
        self._idle_seconds = idle_seconds
        self._keep_every = min(keep_seconds, idle_seconds / 4)
        self._keeper = keeper  # off only in tests: a host that went silent
        self._lock = threading.Lock()
        self._session: Any = None
        self._held: dict[int, UploadGuard] = {}
        self._generation = 0  # a new session: the locks of the old one are gone
        self._kept = 0.0
        self._closed = threading.Event()

    @property
    def session(self) -> Any:
        return self._session

    def take(self, holder: Holder) -> UploadGuard:
        """The lock of the holder's lane and epoch; UploadInProgress if an upload here
        or on another host holds it."""
        key = guard_key(holder.lane_id, holder.epoch)
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
            guard = self._held[key] = UploadGuard(self, holder, key, self._generation)
            return guard

    def keep(self, guard: UploadGuard) -> None:
        with self._lock:
            if guard.generation == self._generation and not guard.fenced:
                # The keeper touches the session; touch it here only if it lags.
                if time.monotonic() - self._kept >= 2 * self._keep_every:
                    self._touch()
            if guard.generation != self._generation:
                log.warning("snapshot upload guard session lost (lane %s)", guard.holder.lane_id)
                raise _lost()
            if guard.fenced:
                raise _fenced(guard.holder)

    def fetchone(
        self, guard: UploadGuard, query: str, params: dict[str, Any]
    ) -> tuple[Any, ...] | None:
        with self._lock:
            if guard.generation == self._generation:
                try:
                    row: tuple[Any, ...] | None = self._session.execute(query, params).fetchone()
                    return row
                except Exception as exc:  # psycopg's own errors: the session is gone
                    log.warning("snapshot upload guard session failed: %s", type(exc).__name__)
                    self._drop()
            raise _lost()

    def release(self, guard: UploadGuard) -> None:
        with self._lock:
            if guard.generation != self._generation or self._held.get(guard.key) is not guard:
                return  # its session is gone, and the lock with it
            del self._held[guard.key]
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

    def _touch(self) -> None:
        """Keep the session from going idle and mark the uploads whose holder was
        fenced off (under the lock). A session that fails is dropped."""
        guards = [guard for guard in self._held.values() if not guard.fenced]
        try:
            rows = self._session.execute(
                queries["fenced_upload_guards"],
                {
                    "keys": [guard.key for guard in guards],
                    "lane_ids": [guard.holder.lane_id for guard in guards],
                    "node_ids": [guard.holder.node_id for guard in guards],
                    "epochs": [guard.holder.epoch for guard in guards],
                },
            ).fetchall()
        except Exception as exc:
            log.warning("snapshot upload guard session failed: %s", type(exc).__name__)
            self._drop()
            return
        self._kept = time.monotonic()
        for (key,) in rows:
            self._held[key].fenced = True

    def _keep_alive(self, generation: int, closed: threading.Event) -> None:
        """The keeper: touches the session every keep interval until it closes."""
        while not closed.wait(self._keep_every):
            with self._lock:
                if generation != self._generation or self._session is None:
                    return
                self._touch()

    def _open(self) -> None:
        wrapper = connections["default"]
        session = wrapper.get_new_connection(wrapper.get_connection_params())
        session.autocommit = True
        session.execute(
            queries["prepare_upload_guard"], {"idle_ms": int(self._idle_seconds * 1000)}
        )
        self._session, self._held = session, {}
        self._generation += 1
        self._kept = time.monotonic()
        self._closed = threading.Event()
        if self._keeper:
            threading.Thread(
                target=self._keep_alive,
                args=(self._generation, self._closed),
                name="snapshot-upload-keeper",
                daemon=True,
            ).start()

    def _drop(self) -> None:
        if self._session is not None:
            with suppress(Exception):
                self._session.close()
        self._session, self._held = None, {}
        self._generation += 1
        self._closed.set()

    def _close_if_unused(self) -> None:
        if not self._held and self._session is not None:
            with suppress(Exception):
                self._session.close()
            self._session = None
            self._closed.set()


# This process's guards (sessions are opened per process, after gunicorn forks).
GUARDS = UploadGuards()


@contextmanager
def one_upload(holder: Holder, guards: UploadGuards | None = None) -> Iterator[UploadGuard]:
    """Hold the guard of the holder's lane and epoch for the block (on this process's
    ``GUARDS`` unless told otherwise); UploadInProgress (429) if another upload holds it."""
    guards = GUARDS if guards is None else guards
    guard = guards.take(holder)
    try:
        yield guard
    finally:
        guards.release(guard)
