"""The node's work loops: lease, read overviews, aggregate, report, finish.

A ``RangeWorker`` leases one range at a time and reads it with a fresh Window; a
``WindowWorker`` holds a group's lane and carries one Window across the lane's
ranges, snapshotting it to the coordinator. Both read a range the same way
(``RangeReader``): overview lines go through ``parse_over_line`` into the Window,
and every N headers or T seconds a batch is handed to a ``Reporter`` thread, so
fetching goes on while the batch is on the wire. A ``Heartbeat`` thread keeps
the leases alive while the worker reads.

What ``next`` means in a batch: every article below it is accounted for, i.e.
its segment went out in this or an earlier batch (or it was not a binary post).
A worker therefore never reports ``next`` beyond the oldest segment still held
open in its window (in window mode as well), so a node that is killed loses
nothing: whoever takes the range over starts at ``next`` and reads every
unreported segment again. A window snapshot is taken at such a ``next`` too.
The ``headers`` of a batch count exactly the articles in [previous next, next),
so the coordinator's header counters add up to the articles in a range however
often it changes hands.
"""

from __future__ import annotations

import bisect
import logging
import queue
import tempfile
import threading
import time
from array import array
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The coordinator's File limits: a file that breaks one would make the whole
# batch a 400, so the agent leaves it out and counts it.
from usenet.limits import (
    MAX_DATE,
    MAX_FILES_PER_BATCH,
    MAX_POSTER,
    MAX_SUBJECT,
    MAX_TOTAL,
    storable_segment,
    storable_text,
)
from usenet.overview import parse_over_line
from usenet.rules import RuleSet

from .aggregate import Window
from .http import (
    Aborted,
    Backoff,
    Coordinator,
    CoordinatorError,
    LeaseLost,
    NotFound,
    Unauthenticated,
)
from .sources import CHUNK, NewsServerFailure, OverviewSource

log = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_UNAUTHENTICATED = 3

_CHECK_EVERY = 512  # lines between looks at the clock, the stop flag and the batch size


@dataclass
class Settings:
    batch_headers: int = 20_000
    batch_seconds: float = 30.0
    snapshot_every: int = 10
    heartbeat_seconds: float = 30.0
    fragment_lag: int = 100_000
    max_open: int = 200_000
    idle_seconds: float = 30.0
    exit_when_idle: bool = False
    duplicate_batches: bool = False
    max_headers_per_second: float = 0.0
    work_dir: Path | None = None
    max_backoff: float = 60.0


class Control:
    """Shared by all workers: the stop request and the exit code."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.abort = threading.Event()  # a second signal: stop retrying calls too
        self.exit_code = EXIT_OK
        self._lock = threading.Lock()

    def fail(self, code: int) -> None:
        with self._lock:
            if self.exit_code == EXIT_OK:
                self.exit_code = code
        self.stop.set()


class Stats:
    """Counters across workers for the periodic log line."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.headers = 0
        self.ranges = 0
        self.batches = 0
        self.files = 0
        self.fragments = 0
        self.skipped = 0

    def add(self, **amounts: int) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "headers": self.headers,
                "ranges": self.ranges,
                "batches": self.batches,
                "files": self.files,
                "fragments": self.fragments,
                "skipped": self.skipped,
            }


@dataclass
class Lease:
    """One range being read; ``lost``/``rejected`` are set by the helper threads."""

    id: int
    group: str
    start: int
    end: int
    epoch: int
    lost: bool = False
    rejected: str | None = None
    rules: dict[str, Any] | None = None  # a rule set the lease carries, if any

    @property
    def path(self) -> str:
        return f"/ranges/{self.id}"


class Stopped(Exception):
    """The range was left before its end: a stop request, or the lease was lost."""


# --- helper threads -------------------------------------------------------------------


class Reporter:
    """Sends batches in order on its own thread while the worker keeps reading."""

    def __init__(self, coordinator: Coordinator, control: Control, stats: Stats, duplicate: bool):
        self.coordinator = coordinator
        self.control = control
        self.stats = stats
        self.duplicate = duplicate
        self._queue: queue.Queue[tuple[Lease, dict[str, Any]] | None] = queue.Queue(maxsize=4)
        self._thread = threading.Thread(target=self._run, name="reporter", daemon=True)
        self._thread.start()

    def submit(self, lease: Lease, body: dict[str, Any]) -> None:
        self._queue.put((lease, body))

    def flush(self) -> None:
        """Wait until every submitted batch is acknowledged (or given up)."""
        self._queue.join()

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                lease, body = item
                if not lease.lost and lease.rejected is None:
                    self._send(lease, body)
            finally:
                self._queue.task_done()

    def _send(self, lease: Lease, body: dict[str, Any]) -> None:
        try:
            for _ in range(2 if self.duplicate else 1):
                self.coordinator.post(f"{lease.path}/batch", body)
        except LeaseLost as exc:
            log.warning("range %s: lease lost while reporting (%s)", lease.id, exc.detail)
            lease.lost = True
        except Unauthenticated as exc:
            log.error("the coordinator refused the token: %s", exc.detail)
            lease.lost = True
            self.control.fail(EXIT_UNAUTHENTICATED)
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


class Heartbeat:
    """Heartbeats every held lease (a range, a lane) every few seconds."""

    def __init__(self, coordinator: Coordinator, interval: float) -> None:
        self.coordinator = coordinator
        self.interval = interval
        self._held: dict[str, tuple[str, dict[str, Any], Lease | None]] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def hold(self, path: str, epoch: int, lease: Lease | None = None) -> None:
        with self._lock:
            self._held[path] = (f"{path}/heartbeat", {"epoch": epoch}, lease)

    def drop(self, path: str) -> None:
        with self._lock:
            self._held.pop(path, None)

    def close(self) -> None:
        self._done.set()

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            with self._lock:
                held = list(self._held.items())
            for key, (path, body, lease) in held:
                try:
                    self.coordinator.post(path, body)
                except LeaseLost:
                    log.warning("%s: lease lost (heartbeat refused)", key)
                    if lease is not None:
                        lease.lost = True
                    self.drop(key)
                except (Aborted, CoordinatorError) as exc:
                    log.warning("%s: heartbeat failed: %s", key, exc)
                except Exception:
                    log.exception("%s: heartbeat failed", key)


# --- reading one range ------------------------------------------------------------------


class RangeReader:
    """Reads one range into a Window and reports it in batches.

    ``carry``: the window goes on into the next range (window mode), so open files
    are not fragments at the end of the range; copies of the ones that grew are
    reported as fragments instead, and they stay open.
    """

    def __init__(
        self,
        lease: Lease,
        window: Window,
        source: OverviewSource,
        reporter: Reporter,
        settings: Settings,
        control: Control,
        stats: Stats,
        *,
        carry: bool,
    ) -> None:
        self.lease = lease
        self.window = window
        self.source = source
        self.reporter = reporter
        self.settings = settings
        self.control = control
        self.stats = stats
        self.carry = carry
        self.reported = lease.start  # the `next` of the last batch handed to the reporter
        self.read_to = lease.start - 1  # every article up to here has been read
        self.fetched = False
        self._numbers = array("q")  # article numbers read and not yet below a reported next
        self._headers_at_batch = window.headers
        self._batch_due = time.monotonic() + settings.batch_seconds
        self._pace_start = time.monotonic()
        self._paced = 0

    def read(self) -> None:
        """Read to the end of the range; raises Stopped when told to stop or the lease is lost."""
        end = self.lease.end
        while self.read_to < end:
            first = self.read_to + 1
            last = min(first + CHUNK - 1, end)
            self._read_span(first, last)
            self.read_to = last
            self.fetched = True
            self._check()

    def _read_span(self, first: int, last: int) -> None:
        window = self.window
        add = window.add
        append = self._numbers.append
        article = self.read_to
        # Look at the clock often enough for small batches and for pacing.
        every = min(_CHECK_EVERY, self.settings.batch_headers)
        if self.settings.max_headers_per_second > 0:
            every = max(1, min(every, int(self.settings.max_headers_per_second / 10)))
        countdown = every
        for line in self.source.lines(self.lease, first, last):
            overview = parse_over_line(line)
            if overview is None:
                window.headers += 1
                window.malformed += 1
                append(article)  # counted where it stood in the stream
            else:
                article = overview.article
                append(article)
                add(overview)
            countdown -= 1
            if not countdown:
                countdown = every
                self.read_to = article
                self.fetched = True
                self._check(lines=every)
        self.stats.add(headers=every - countdown)
        self._pace(every - countdown)

    def _check(self, lines: int = 0) -> None:
        if lines:
            self.stats.add(headers=lines)
            self._pace(lines)
        if self.control.stop.is_set() or self.lease.lost or self.lease.rejected:
            raise Stopped
        due = self.window.headers - self._headers_at_batch >= self.settings.batch_headers
        if due or time.monotonic() >= self._batch_due:
            self.report()

    def _pace(self, lines: int) -> None:
        limit = self.settings.max_headers_per_second
        if limit <= 0:
            return
        self._paced += lines
        ahead = self._paced / limit - (time.monotonic() - self._pace_start)
        if ahead > 0:
            self.control.stop.wait(ahead)

    def report(self, *, final: bool = False, drain: bool = False) -> None:
        """Hand a batch to the reporter.

        final: the whole range has been read (next = end + 1).
        drain: the window closes here, so every open file goes out as a fragment.
        """
        window = self.window
        files = window.take_complete()
        next_id = self.lease.end + 1 if final else self.read_to + 1
        if drain or (final and not self.carry):
            fragments = window.drain()
        else:
            fragments = window.take_fragments_before(self.read_to + 1 - self.settings.fragment_lag)
            if final:
                fragments += window.take_open_copies()
            else:
                # In window mode too: a quiet lane's range in work passes to a range
                # lease at its `next`, and no snapshot of ours covers that.
                oldest = window.oldest_open_article()
                if oldest is not None:
                    next_id = min(next_id, oldest)
        next_id = max(next_id, self.reported)
        numbers = self._numbers
        headers = bisect.bisect_left(numbers, next_id)
        del numbers[:headers]
        previous = self.reported
        moved = next_id > previous
        self.reported = next_id
        self._headers_at_batch = window.headers
        self._batch_due = time.monotonic() + self.settings.batch_seconds
        files, skipped = reportable(files)
        fragments, skipped_fragments = reportable(fragments)
        if skipped or skipped_fragments:
            self.stats.add(skipped=skipped + skipped_fragments)
        if not (moved or files or fragments or final):
            return
        # A drained window can hold more files than the coordinator takes in one
        # batch. Those sent first keep the previous next; only the last moves it.
        limit = MAX_FILES_PER_BATCH
        while len(files) > limit or len(fragments) > limit:
            self._submit(previous, 0, files[:limit], fragments[:limit])
            files, fragments = files[limit:], fragments[limit:]
        self._submit(next_id, headers, files, fragments)

    def _submit(
        self,
        next_id: int,
        headers: int,
        files: list[dict[str, Any]],
        fragments: list[dict[str, Any]],
    ) -> None:
        body = {
            "epoch": self.lease.epoch,
            "next": next_id,
            "headers": headers,
            "files": files,
            "fragments": fragments,
        }
        self.reporter.submit(self.lease, body)

    def settle(self) -> None:
        """Wait for the reporter; raise Stopped if the lease was lost meanwhile."""
        self.reporter.flush()
        if self.lease.lost:
            raise Stopped


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


# --- workers ---------------------------------------------------------------------------


class Worker:
    def __init__(
        self,
        name: str,
        coordinator: Coordinator,
        source: OverviewSource,
        settings: Settings,
        control: Control,
        stats: Stats,
    ) -> None:
        self.name = name
        self.coordinator = coordinator
        self.source = source
        self.settings = settings
        self.control = control
        self.stats = stats
        self.backoff = Backoff(base=1.0, cap=settings.max_backoff)

    def run(self) -> None:
        reporter = Reporter(
            self.coordinator, self.control, self.stats, self.settings.duplicate_batches
        )
        heartbeat = Heartbeat(self.coordinator, self.settings.heartbeat_seconds)
        try:
            self.loop(reporter, heartbeat)
        except Unauthenticated as exc:
            log.error("the coordinator refused the token (401): %s", exc.detail)
            self.control.fail(EXIT_UNAUTHENTICATED)
        except Aborted:
            pass
        except Exception:
            log.exception("%s: unexpected error; stopping the node", self.name)
            self.control.fail(EXIT_UNEXPECTED)
        finally:
            heartbeat.close()
            reporter.close()

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        raise NotImplementedError

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

    def release(self, lease: Lease, error: str | None, uncounted: bool) -> None:
        body: dict[str, Any] = {"epoch": lease.epoch, "uncounted": uncounted}
        if error:
            body["error"] = error[:2000]
        try:
            self.coordinator.post(f"{lease.path}/release", body)
        except (LeaseLost, NotFound) as exc:
            log.info("range %s: release not needed (%s)", lease.id, exc.detail)

    def reader(
        self, lease: Lease, window: Window, reporter: Reporter, *, carry: bool
    ) -> RangeReader:
        return RangeReader(
            lease,
            window,
            self.source,
            reporter,
            self.settings,
            self.control,
            self.stats,
            carry=carry,
        )

    def finish_range(self, reader: RangeReader) -> bool:
        """Read the range to its end, report it and finish it.

        False if the coordinator refused a batch: the range is released with the
        error instead. Raises Stopped when told to stop or the lease is lost.
        """
        lease = reader.lease
        reader.read()
        reader.report(final=True)
        reader.settle()
        if lease.rejected:
            self.release(lease, lease.rejected, uncounted=False)
            return False
        self.coordinator.post(f"{lease.path}/finish", {"epoch": lease.epoch})
        self.stats.add(ranges=1)
        self.backoff.reset()
        return True

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


class RangeWorker(Worker):
    """Range mode: one range at a time, each with a fresh window."""

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        while not self.control.stop.is_set():
            offer = self.coordinator.post("/ranges/lease")
            data = offer.get("lease")
            if data is None:
                if not self.idle(offer):
                    return
                continue
            lease = Lease(
                id=data["id"],
                group=data["group"],
                start=data["start"],
                end=data["end"],
                epoch=data["epoch"],
                rules=data.get("rules"),
            )
            heartbeat.hold(lease.path, lease.epoch, lease)
            try:
                self.read_range(lease, reporter)
            finally:
                heartbeat.drop(lease.path)

    def rules_for(self, lease: Lease) -> RuleSet:
        # Range leases carry no rules in protocol v1; the coordinator re-derives
        # identities itself, so the default rules only decide what is grouped here.
        return RuleSet.from_dict(lease.rules) if lease.rules else RuleSet.default()

    def read_range(self, lease: Lease, reporter: Reporter) -> None:
        window = Window(self.rules_for(lease), lease.group, max_open=self.settings.max_open)
        reader = self.reader(lease, window, reporter, carry=False)
        log.info(
            "%s: range %s of %s, articles %s-%s",
            self.name,
            lease.id,
            lease.group,
            lease.start,
            lease.end,
        )
        try:
            if self.finish_range(reader):
                log.info("%s: range %s done (%s headers)", self.name, lease.id, window.headers)
        except LeaseLost as exc:
            log.warning("%s: range %s lost: %s", self.name, lease.id, exc.detail)
        except Stopped:
            self.leave(lease, reader, error=lease.rejected)
        except NewsServerFailure as exc:
            log.error("%s: range %s: %s", self.name, lease.id, exc)
            self.leave(lease, reader, error=str(exc))
            self.pause_after_failure("the news server failed")
        except CoordinatorError as exc:
            if isinstance(exc, Unauthenticated):
                raise
            log.error("%s: range %s refused, this is a bug: %s", self.name, lease.id, exc)
            self.release(lease, str(exc), uncounted=False)

    def leave(self, lease: Lease, reader: RangeReader, error: str | None) -> None:
        """Give the range back after reporting what was read (all open files as fragments)."""
        if lease.lost:
            log.info("%s: range %s was lost; dropping it", self.name, lease.id)
            return
        if not reader.fetched:
            self.release(lease, error, uncounted=True)
            return
        if lease.rejected is None:
            self.report_before_release(reader, drain=True)
        if lease.lost:
            return
        self.release(lease, error or lease.rejected, uncounted=False)
        log.info("%s: range %s released at %s", self.name, lease.id, reader.reported)


class WindowWorker(Worker):
    """Window mode: hold a group's lane and carry one window through its ranges."""

    def __init__(self, *args: Any, lane: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane = lane

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        while not self.control.stop.is_set():
            try:
                offer = self.coordinator.post("/groups/lease", {"lane": self.lane})
            except NotFound as exc:
                # A coordinator without window indexing: say so and try again later.
                self.pause_after_failure(f"group leases are not served here ({exc.detail})")
                continue
            data = offer.get("lease")
            if data is None:
                if not self.idle(offer):
                    return
                continue
            lane_path = f"/groups/{data['group']['id']}/lanes/{data['lane']}"
            heartbeat.hold(lane_path, data["epoch"])
            try:
                worked = self.hold_lane(data, lane_path, reporter, heartbeat)
            except LeaseLost as exc:
                log.warning("%s: lane %s lost: %s", self.name, lane_path, exc.detail)
                worked = True
            finally:
                heartbeat.drop(lane_path)
            if not worked and not self.idle({"retry_after": None}):
                return

    def hold_lane(
        self, data: dict[str, Any], lane_path: str, reporter: Reporter, heartbeat: Heartbeat
    ) -> bool:
        """Work the lane until it is caught up or the node stops; True if a range was read."""
        group = data["group"]["name"]
        epoch = data["epoch"]
        rules = RuleSet.from_dict(data["rules"]) if data.get("rules") else RuleSet.default()
        window = self.restore(lane_path, epoch, group, rules, data.get("snapshot"))
        ranges_read = 0
        position: int | None = (data.get("snapshot") or {}).get("next")
        log.info("%s: holding lane %s of %s", self.name, data["lane"], group)
        while not self.control.stop.is_set():
            answer = self.coordinator.post(f"{lane_path}/next", {"epoch": epoch})
            item = answer.get("range")
            if item is None:
                log.info("%s: lane %s of %s is caught up", self.name, data["lane"], group)
                break
            lease = Lease(
                id=item["id"],
                group=group,
                start=item.get("next", item["start"]),
                end=item["end"],
                epoch=item["epoch"],
            )
            heartbeat.hold(lease.path, lease.epoch, lease)
            try:
                position = self.read_lane_range(lease, window, reporter, lane_path, epoch)
            finally:
                heartbeat.drop(lease.path)
            if position is None:
                return True  # lost: someone else holds the lane or the range now
            ranges_read += 1
            if self.control.stop.is_set():
                break
            if ranges_read % self.settings.snapshot_every == 0:
                self.upload_snapshot(lane_path, epoch, window, position)
        if position is not None:
            self.upload_snapshot(lane_path, epoch, window, position)
        try:
            self.coordinator.post(f"{lane_path}/release", {"epoch": epoch})
        except (LeaseLost, NotFound) as exc:
            log.info("%s: lane release not needed (%s)", self.name, exc.detail)
        return ranges_read > 0

    def read_lane_range(
        self, lease: Lease, window: Window, reporter: Reporter, lane_path: str, epoch: int
    ) -> int | None:
        """Read one range of the lane; returns the lane's position after it, None if lost."""
        reader = self.reader(lease, window, reporter, carry=True)
        try:
            return lease.end + 1 if self.finish_range(reader) else None
        except LeaseLost as exc:
            log.warning("%s: range %s lost: %s", self.name, lease.id, exc.detail)
            return None
        except (Stopped, NewsServerFailure) as exc:
            error = str(exc) if isinstance(exc, NewsServerFailure) else lease.rejected
            if lease.lost:
                return None
            if not reader.fetched:
                self.release(lease, error, uncounted=True)
            else:
                # Report up to the oldest open segment, then snapshot the window at
                # that same article (a snapshot at N only once batches reach N: the
                # takeover reset moves resume points to it); only if the snapshot
                # fails do the open files go out as fragments.
                self.report_before_release(reader, drain=False)
                saved = (
                    not lease.lost
                    and lease.rejected is None
                    and self.upload_snapshot(lane_path, epoch, window, reader.reported)
                )
                if not saved:
                    self.report_before_release(reader, drain=True)
                if not lease.lost:  # lost on the last batch: nothing left to release
                    self.release(lease, error or lease.rejected, uncounted=False)
            if isinstance(exc, NewsServerFailure):
                log.error("%s: range %s: %s", self.name, lease.id, exc)
                self.pause_after_failure("the news server failed")
            return None

    def restore(
        self,
        lane_path: str,
        epoch: int,
        group: str,
        rules: RuleSet,
        snapshot: dict[str, Any] | None,
    ) -> Window:
        if snapshot:
            with tempfile.TemporaryFile(dir=self.settings.work_dir) as spool:
                try:
                    response = self.coordinator.open_stream(
                        f"{lane_path}/snapshot", {"epoch": epoch}
                    )
                    with response:
                        while chunk := response.read(256 * 1024):
                            spool.write(chunk)
                    spool.seek(0)
                    window = Window.restore(spool, rules)
                except NotFound:
                    log.info("%s: the lane's snapshot is gone; starting empty", self.name)
                except (ValueError, OSError, EOFError) as exc:
                    log.warning("%s: unreadable snapshot (%s); starting empty", self.name, exc)
                else:
                    if window.group == group:
                        log.info("%s: restored a window of %s open files", self.name, len(window))
                        window.max_open = self.settings.max_open
                        return window
                    log.warning("%s: the snapshot is of %s, not %s", self.name, window.group, group)
        return Window(rules, group, max_open=self.settings.max_open)

    def upload_snapshot(self, lane_path: str, epoch: int, window: Window, position: int) -> bool:
        """PUT the window, streamed from a temporary file; False if the coordinator refused."""
        with tempfile.NamedTemporaryFile(
            dir=self.settings.work_dir, prefix="window-", suffix=".jsonl.gz"
        ) as spool:
            window.serialize(spool)
            spool.flush()
            try:
                self.coordinator.put_file(
                    f"{lane_path}/snapshot",
                    Path(spool.name),
                    "application/gzip",
                    {"epoch": epoch, "next": position},
                )
            except (LeaseLost, NotFound, CoordinatorError) as exc:
                if isinstance(exc, Unauthenticated):
                    raise
                log.warning("%s: snapshot refused: %s", self.name, exc)
                return False
        return True
