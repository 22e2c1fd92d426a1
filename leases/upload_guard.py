"""One snapshot upload per lane at a time, across every worker of every coordinator host.

Each upload may be gigabytes; a holder that sent many at once (or a resend
overlapping its first attempt) could fill the disk. An upload holds a
PostgreSQL session advisory lock keyed by the lane for as long as it streams,
on a database session of its own (never the request's connection, which runs
the upload's transactions and may be closed and reused). The lock lives in the
database every host shares, so it holds across hosts, and it cannot stay stuck:
a worker that dies closes its session, and a host that dies without closing it
(power, network) leaves the session idle, which PostgreSQL ends after
``IDLE_SECONDS`` (``idle_session_timeout``). An upload touches the session at
least every ``KEEP_SECONDS`` while bytes arrive, so only a stalled one loses
it, and then fails rather than race a second upload. Advisory locks are per
session: behind PgBouncer this needs session mode (docs/several-hosts.md).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from django.db import connections

from indexer.errors import Unavailable, UploadInProgress

from .sql import queries

log = logging.getLogger(__name__)

IDLE_SECONDS = 120.0  # an idle guard session ends after this (a host that died)
KEEP_SECONDS = 10.0  # a live upload touches its guard at least this often
RETRY_SECONDS = 10  # Retry-After of an upload refused while another one runs
_KEY_SPACE = 2**31 - 1  # the lock's second key is an int; lane ids past it share keys


class UploadGuard:
    """The lock of one lane's upload, held on a session of its own (see the module)."""

    def __init__(self, session: Any, lane_id: int, idle_seconds: float) -> None:
        self._session = session
        self._lane_id = lane_id
        self._keep_every = min(KEEP_SECONDS, idle_seconds / 4)
        self._kept = time.monotonic()

    def keep(self) -> None:
        """Touch the session now and then while the upload streams; Unavailable if it was lost."""
        now = time.monotonic()
        if now - self._kept < self._keep_every:
            return
        try:
            self._session.execute(queries["keep_upload_guard"])
        except Exception as exc:  # ended by idle_session_timeout, or the database went away
            log.warning("snapshot upload guard of lane %s lost: %s", self._lane_id, exc)
            raise Unavailable(
                "The upload stalled and lost its hold on the lane (another upload may have "
                "begun since); send the snapshot again."
            ) from exc
        self._kept = now

    @property
    def session(self) -> Any:
        """The guard's own session: a thread that is not the request's may read on it."""
        return self._session

    def close(self) -> None:
        with suppress(Exception):  # closing the session frees the lock whatever happened
            self._session.close()


@contextmanager
def one_upload(lane_id: int, idle_seconds: float = IDLE_SECONDS) -> Iterator[UploadGuard]:
    """Hold the lane's upload guard for the block; UploadInProgress (429) if another holds it."""
    session = _new_session()
    guard = UploadGuard(session, lane_id, idle_seconds)
    try:
        try:
            session.execute(queries["prepare_upload_guard"], {"idle_ms": int(idle_seconds * 1000)})
            row = session.execute(
                queries["take_upload_guard"], {"key": lane_id % _KEY_SPACE}
            ).fetchone()
        except Exception as exc:
            raise Unavailable(
                "The coordinator could not take the lane's upload guard in the database; "
                "try again later."
            ) from exc
        if not row[0]:
            raise UploadInProgress(
                "Another upload of this lane's snapshot is still streaming; one runs at a "
                f"time. Send it again after Retry-After ({RETRY_SECONDS} s).",
                retry_after=RETRY_SECONDS,
            )
        yield guard
    finally:
        guard.close()


def _new_session() -> Any:
    wrapper = connections["default"]
    try:
        session = wrapper.get_new_connection(wrapper.get_connection_params())
    except Exception as exc:
        raise Unavailable(
            "The coordinator could not open a database session for the upload; try again later."
        ) from exc
    session.autocommit = True
    return session
