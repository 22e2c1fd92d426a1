"""The base of both kinds of worker: its thread, idling, finishing and releasing a range.

``RangeWorker`` (seed_node/ranges.py) and ``WindowWorker`` (seed_node/window.py)
each implement ``loop``.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from .aggregate import Window
from .control import EXIT_OK, EXIT_UNEXPECTED, Context
from .http import (
    Aborted,
    Backoff,
    Coordinator,
    CoordinatorError,
    LeaseLost,
    NotFound,
    Unauthenticated,
)
from .leases import Heartbeat, Lease
from .reading import RangeReader
from .reporting import Reporter

log = logging.getLogger(__name__)


class Releasable(Protocol):
    """A lease of any kind: a range, a lane, an inspection."""

    @property
    def id(self) -> int: ...

    @property
    def epoch(self) -> int: ...

    @property
    def path(self) -> str: ...


class Worker:
    """One worker thread; ``loop`` (range or window mode) leases and reads until the node stops."""

    def __init__(self, name: str, coordinator: Coordinator, context: Context) -> None:
        self.name, self.coordinator, self.context = name, coordinator, context
        self.source, self.settings = context.source, context.settings
        self.control, self.stats = context.control, context.stats
        self.backoff = Backoff(base=1.0, cap=self.settings.max_backoff)

    def run(self) -> None:
        reporter = Reporter(
            self.coordinator, self.control, self.stats, self.settings.duplicate_batches
        )
        heartbeat = Heartbeat(self.coordinator, self.settings.heartbeat_seconds)
        try:
            self.loop(reporter, heartbeat)
        except Unauthenticated as exc:
            self.control.token_refused(exc.detail)
        except Aborted:
            pass
        except Exception:
            log.exception("%s: unexpected error; stopping the node", self.name)
            self.control.fail(EXIT_UNEXPECTED)
        finally:
            if self.control.exit_code == EXIT_OK:
                # A stop (SIGTERM) waits for the batches in flight and the finishes
                # that follow them; a second signal aborts the calls' retries.
                self.wait_for_reporter(reporter)
            heartbeat.close()
            reporter.close()

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        raise NotImplementedError

    def wait_for_reporter(self, reporter: Reporter) -> None:
        """Wait until every batch handed to the reporter is answered and every finish
        after one is done; timed as waiting on batch answers (``--stats``)."""
        started = time.perf_counter()
        reporter.flush()
        self.stats.add(handoff_seconds=time.perf_counter() - started)

    def call(
        self, path: str, body: dict[str, Any] | None = None, busy_attempts: int | None = None
    ) -> Any:
        """POST to the coordinator from the worker itself, timed for ``--stats``."""
        started = time.perf_counter()
        try:
            return self.coordinator.post(path, body, busy_attempts=busy_attempts)
        finally:
            self.stats.add(call_seconds=time.perf_counter() - started)

    def idle(self, offer: dict[str, Any]) -> bool:
        """Nothing handed out: wait (True) or, with exit_when_idle, stop (False)."""
        if offer.get("paused"):
            log.info("%s: leasing is paused: %s", self.name, offer["paused"])
        elif self.settings.exit_when_idle:
            log.info("%s: nothing left to lease; done", self.name)
            return False
        wait = offer.get("retry_after") or self.settings.idle_seconds
        self.control.stop.wait(wait)
        return True

    def release(self, lease: Releasable, error: str | None, uncounted: bool) -> None:
        body: dict[str, Any] = {"epoch": lease.epoch, "uncounted": uncounted}
        if error:
            body["error"] = error[:2000]
        try:
            self.call(f"{lease.path}/release", body)
        except (LeaseLost, NotFound) as exc:
            log.info("%s: release not needed (%s)", lease.path, exc.detail)

    def reader(
        self, lease: Lease, window: Window, reporter: Reporter, *, carry: bool
    ) -> RangeReader:
        return RangeReader(lease, window, reporter, self.context, carry=carry)

    def close_range(
        self,
        lease: Lease,
        headers: int,
        heartbeat: Heartbeat,
        unfinished: threading.Event | None = None,
    ) -> None:
        """On the reporter thread, once the range's last batch is answered: finish it,
        or release it with the error a batch was refused with (none when it was lost);
        then end its heartbeat. ``unfinished`` is set when the range was not finished."""
        finished = False
        try:
            if lease.lost:
                log.warning("%s: range %s lost while reporting", self.name, lease.id)
            elif lease.rejected is not None:
                self.release(lease, lease.rejected, uncounted=False)
            else:
                # Not self.call: no worker waits on it (call_seconds).
                self.coordinator.post(f"{lease.path}/finish", {"epoch": lease.epoch})
                finished = True
                self.stats.add(ranges=1)
                log.info("%s: range %s done (%s headers)", self.name, lease.id, headers)
        except LeaseLost as exc:
            log.warning("%s: range %s lost: %s", self.name, lease.id, exc.detail)
        except Unauthenticated as exc:
            self.control.token_refused(exc.detail)
        except Aborted:
            pass
        except CoordinatorError as exc:
            log.error("%s: range %s refused, this is a bug: %s", self.name, lease.id, exc)
            self.release(lease, str(exc), uncounted=False)
        finally:
            heartbeat.drop(lease.path)
            if not finished and unfinished is not None:
                unfinished.set()

    def report_before_release(self, reader: RangeReader, *, drain: bool) -> None:
        """Report what was read before giving the range back, and wait for the answer.

        Not ``settle()``: this runs while handling a Stopped, and a lease lost on
        this last batch (409, or a second signal) only means there is nothing to
        release; the caller checks ``lease.lost``.
        """
        reader.report(drain=drain)
        reader.reporter.flush()

    def pause_after_failure(self, what: str) -> None:
        delay = self.backoff.next_delay()
        log.warning("%s: %s; waiting %.1fs", self.name, what, delay)
        self.control.stop.wait(delay)
