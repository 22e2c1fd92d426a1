"""Reporting batches: the thread that sends them in order, and the files the coordinator takes."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from usenet.batch_columns import columnar

# The coordinator's File limits: a file that breaks one would make the whole
# batch a 400, so the agent leaves it out and counts it.
from usenet.limits import (
    MAX_DATE,
    MAX_POSTER,
    MAX_SUBJECT,
    MAX_TOTAL,
    storable_segment,
    storable_text,
)

from .control import Control, Stats
from .http import Aborted, Coordinator, CoordinatorError, LeaseLost, Unauthenticated
from .leases import Held, Lease

log = logging.getLogger(__name__)

# How long closing waits for the reporter's thread. A stop (SIGTERM) has waited for
# every batch already (Worker.wait_for_reporter); this only bounds a failed node's exit.
CLOSE_SECONDS = 5.0


# A batch to send for a lease, or (body None) what to do once the lease's batches
# before it are answered.
# (`after` takes any lease: a range's finish, an inspection's report.)
Item = tuple[Any, dict[str, Any] | None, Callable[[], None] | None]


class Reporter:
    """Sends batches in order on its own thread while the worker keeps reading, and
    runs what follows a range's last batch (its finish) once that batch is answered."""

    def __init__(self, coordinator: Coordinator, control: Control, stats: Stats, duplicate: bool):
        self.coordinator = coordinator
        self.control = control
        self.stats = stats
        self.duplicate = duplicate
        self._queue: queue.Queue[Item | None] = queue.Queue(maxsize=4)
        self._thread = threading.Thread(target=self._run, name="reporter", daemon=True)
        self._thread.start()

    def submit(self, lease: Lease, body: dict[str, Any]) -> None:
        self._queue.put((lease, body, None))

    def after(self, lease: Held, action: Callable[[], None]) -> None:
        """Run ``action`` on this thread once every batch submitted before it has been
        answered (or given up): a range's finish follows its last batch's answer while
        the worker already asks for the next range. ``action`` reads ``lease.lost`` and
        ``lease.rejected`` itself."""
        self._queue.put((lease, None, action))

    def flush(self) -> None:
        """Wait until every submitted batch is acknowledged (or given up)."""
        self._queue.join()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=CLOSE_SECONDS)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                lease, body, action = item
                if action is not None:
                    self._follow(lease, action)
                elif body is not None and not lease.lost and lease.rejected is None:
                    self._send(lease, body)
            finally:
                self._queue.task_done()

    def _follow(self, lease: Held, action: Callable[[], None]) -> None:
        try:
            action()
        except Exception:
            log.exception("lease %s: what follows its last report failed", lease.id)

    def _send(self, lease: Lease, body: dict[str, Any]) -> None:
        started = time.perf_counter()
        try:
            for _ in range(2 if self.duplicate else 1):
                self._post_batch(lease, body)
        except LeaseLost as exc:
            log.warning("range %s: lease lost while reporting (%s)", lease.id, exc.detail)
            lease.lost = True
        except Unauthenticated as exc:
            lease.lost = True
            self.control.token_refused(exc.detail)
        except Aborted:
            lease.lost = True
        except CoordinatorError as exc:
            log.error("range %s: batch refused, this is a bug: %s", lease.id, exc)
            lease.rejected = str(exc)
        except Exception as exc:
            log.exception("range %s: batch failed", lease.id)
            lease.rejected = f"batch failed: {exc!r}"
        else:
            self.stats.add(batches=1, files=len(body["files"]), fragments=len(body["fragments"]))
        finally:
            self.stats.add(batch_seconds=time.perf_counter() - started)

    def _post_batch(self, lease: Lease, body: dict[str, Any]) -> None:
        """The batch in the columnar form; as File objects to a coordinator that refused
        that form (remembered on the Coordinator, so later batches go so at once)."""
        path = f"{lease.path}/batch"
        if self.coordinator.takes_columns:
            wire = {**body, "files": columnar(body["files"]),
                    "fragments": columnar(body["fragments"])}  # fmt: skip
            try:
                self.coordinator.post(path, wire)
                return
            except CoordinatorError as exc:
                if not refuses_columns(exc):
                    raise
                log.warning(
                    "the coordinator does not read columnar files (%s); batches go as File objects",
                    exc.detail,
                )
            self.coordinator.takes_columns = False
        self.coordinator.post(path, body)


def refuses_columns(exc: CoordinatorError) -> bool:
    """A coordinator from before the columnar form (docs/api.md) answers a columnar
    batch 400 with a sentence that names `files` (or `fragments`) as a whole and asks
    for a list ("files: must be a list of files."). One that reads columns names the
    column it refuses (`files.subject: ...`) or says columns are allowed, and one that
    refuses a batch's count says "holds": none of those is taken for this."""
    if exc.status != 400:
        return False
    field, colon, sentence = exc.detail.partition(":")
    return (
        bool(colon)
        and field.strip() in ("files", "fragments")
        and "list" in sentence
        and "column" not in sentence
    )


def reportable(files: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The files the coordinator will accept, with dates as it wants them.

    The coordinator's own rules (usenet/limits.py): a segment it would refuse is
    left out of its file, and a file it would refuse (or with no segment left) is
    left out and counted.
    """
    kept = []
    skipped = 0
    for item in files:
        if item["date"] is None or not 0 <= item["date"] <= MAX_DATE:
            item["date"] = 0  # no readable date on any segment
        total = item["total"]
        if not (
            1 <= total <= MAX_TOTAL
            and storable_text(item["subject"], MAX_SUBJECT)
            and storable_text(item["poster"], MAX_POSTER)
            and item["subject"].strip()
        ):
            skipped += 1
            continue
        segments = [
            segment
            for segment in item["segments"]
            if storable_segment(segment[0], segment[1], segment[2], segment[3], total)
        ]
        if not segments:
            skipped += 1
            continue
        item["segments"] = segments
        kept.append(item)
    return kept, skipped
