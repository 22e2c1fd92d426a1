"""Window mode (``--mode window``): hold a group's lane, carry one window through its ranges.

The window is restored from the lane's snapshot and uploaded again every few
ranges, when the lane is caught up and on shutdown, each time once the batches
before it are answered.

A range's finish follows its last batch's answer on the reporter thread while
the worker already asks the lane's ``next`` (naming the range it has read, so
the coordinator moves on) and reads the following range; a stop waits for both
(Worker.run). A range refused or lost on its last batch ends the lane's work
without a snapshot past it.
"""

from __future__ import annotations

import http.client
import logging
import tempfile
import threading
from pathlib import Path
from typing import Any

from usenet.limits import MAX_ARTICLE
from usenet.rules import RuleSet

from .aggregate import SnapshotError, Window
from .http import CoordinatorError, LeaseLost, NotFound, Unauthenticated
from .leases import Heartbeat, Lease
from .reading import Stopped
from .reporting import Reporter
from .sources import NewsServerFailure
from .worker import Worker

log = logging.getLogger(__name__)

DOWNLOAD_ATTEMPTS = 3  # of a snapshot whose download breaks off, before the lane is given back
# 429s in a row (another upload of the lane is streaming) before a snapshot is
# given up: the window goes on, and its next snapshot is uploaded in its place.
UPLOAD_BUSY_ATTEMPTS = 3


class SnapshotUnavailable(Exception):
    """The lane's snapshot could not be downloaded whole: the lane is given back."""


def lane_articles(snapshot: dict[str, Any]) -> tuple[int, int]:
    """The lane's first and last article, as the lease names them with its snapshot:
    a snapshot's files hold no segment outside them. A coordinator that names
    none (an older one) bounds nothing."""
    first, last = snapshot.get("first"), snapshot.get("last")
    if type(first) is int and type(last) is int:
        return first, last
    return 0, MAX_ARTICLE


class WindowWorker(Worker):
    """Window mode: hold a group's lane and carry one window through its ranges."""

    def __init__(self, *args: Any, lane: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lane = lane

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        while not self.control.stop.is_set():
            try:
                offer = self.call("/groups/lease", {"lane": self.lane})
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
        try:
            window = self.restore(lane_path, epoch, group, rules, data.get("snapshot"))
        except SnapshotUnavailable as exc:
            # Never carry on with an empty window: the snapshot's open files lie
            # behind its position and would be dropped. Another try, later.
            self.release_lane(lane_path, epoch)
            self.pause_after_failure(f"lane {data['lane']} of {group} given back: {exc}")
            return True
        ranges_read = 0
        position: int | None = (data.get("snapshot") or {}).get("next")
        # The range read to its end whose finish follows its last batch on the
        # reporter thread; set there when one of the lane's ranges was refused or lost.
        read: int | None = None
        broken = threading.Event()
        log.info("%s: holding lane %s of %s", self.name, data["lane"], group)
        while not self.control.stop.is_set() and not broken.is_set():
            body = {"epoch": epoch} if read is None else {"epoch": epoch, "read": read}
            answer = self.call(f"{lane_path}/next", body)
            item = answer.get("range")
            if item is not None and item["id"] == read:
                # A coordinator that answers the range in work until it is finished
                # (before issue 27): wait for its finish, then ask again.
                self.wait_for_reporter(reporter)
                read = None
                continue
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
            position = None
            try:
                position = self.read_lane_range(
                    lease, window, reporter, lane_path, epoch, heartbeat, broken
                )
            finally:
                if position is None:  # else the reporter ends it after the finish
                    heartbeat.drop(lease.path)
            if position is None:
                # Lost, stopped or the news server failed: give the lane back
                # (a lane another node holds now refuses, and nothing changes),
                # or it stays held until its TTL with nobody working it. The
                # range read before still has its finish pending on the reporter:
                # it goes first, or the release frees that range to be read again.
                self.wait_for_reporter(reporter)
                self.release_lane(lane_path, epoch)
                return True
            read = lease.id
            ranges_read += 1
            if self.control.stop.is_set():
                break
            if ranges_read % self.settings.snapshot_every == 0:
                self.snapshot_settled(lane_path, epoch, window, position, reporter, broken)
        if position is not None:
            self.snapshot_settled(lane_path, epoch, window, position, reporter, broken)
        self.release_lane(lane_path, epoch)
        return ranges_read > 0

    def snapshot_settled(
        self,
        lane_path: str,
        epoch: int,
        window: Window,
        position: int,
        reporter: Reporter,
        broken: threading.Event,
    ) -> None:
        """Upload the window at ``position`` once every batch before it is answered (the
        takeover reset moves resume points to a snapshot's article); none once one of
        the lane's ranges was refused or lost, whose articles the window holds unstored."""
        self.wait_for_reporter(reporter)
        if broken.is_set():
            log.warning("%s: a range of the lane was not finished; no snapshot", self.name)
            return
        self.upload_snapshot(lane_path, epoch, window, position)

    def release_lane(self, lane_path: str, epoch: int) -> None:
        try:
            self.call(f"{lane_path}/release", {"epoch": epoch})
        except (LeaseLost, NotFound) as exc:
            log.info("%s: lane release not needed (%s)", self.name, exc.detail)

    def read_lane_range(
        self,
        lease: Lease,
        window: Window,
        reporter: Reporter,
        lane_path: str,
        epoch: int,
        heartbeat: Heartbeat,
        broken: threading.Event,
    ) -> int | None:
        """Read one range of the lane; returns the lane's position after it, None if lost.

        Read to its end, the range's finish follows its last batch's answer on the
        reporter thread (which then ends its heartbeat) while the worker already asks
        for the lane's next range; a refused or lost last batch sets ``broken``."""
        reader = self.reader(lease, window, reporter, carry=True)
        headers = window.headers
        try:
            reader.read()
            reader.report(final=True)
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
                    and not broken.is_set()
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
        headers = window.headers - headers  # the range's, before the window reads on
        reporter.after(lease, lambda: self.close_range(lease, headers, heartbeat, broken))
        self.backoff.reset()
        return lease.end + 1

    def restore(
        self,
        lane_path: str,
        epoch: int,
        group: str,
        rules: RuleSet,
        snapshot: dict[str, Any] | None,
    ) -> Window:
        """The lane's window from its snapshot; an empty one if there is none or it is bad.

        A snapshot is another node's output, so it is read as untrusted input
        (Window.restore). A bad one is logged with its cause, counted
        (``snapshot_resets``) and replaced at once by the empty window at the
        lane's snapshot position, so the lane goes on from there and the next
        holder does not meet it again.
        """
        if not snapshot:
            return Window(rules, group, max_open=self.settings.max_open)
        try:
            window = self.download_whole(lane_path, epoch, rules, lane_articles(snapshot))
        except NotFound as exc:
            # The coordinator has no file for the row: nothing to restore.
            log.warning("%s: no snapshot to restore (%s); starting empty", self.name, exc)
            return Window(rules, group, max_open=self.settings.max_open)
        except SnapshotError as exc:
            cause = f"the snapshot cannot be trusted: {exc}"
        else:
            if window.group == group:
                self.log_restored(window)
                return window
            cause = f"the snapshot is of {window.group!r}, not {group!r}"
        return self.reset_window(lane_path, epoch, group, rules, snapshot, cause)

    def log_restored(self, window: Window) -> None:
        log.info("%s: restored a window of %s open files", self.name, len(window))
        if window.dropped:
            # Another node's files, or ones the rules in force no longer take:
            # reported by us, they would go into the catalog under our name.
            log.warning(
                "%s: dropped %s file(s) of the snapshot of %s that do not belong to the lane"
                " (the first: %s)",
                self.name,
                window.dropped,
                window.group,
                window.drop_reason,
            )
            self.stats.add(snapshot_dropped=window.dropped)

    def download_whole(
        self, lane_path: str, epoch: int, rules: RuleSet, articles: tuple[int, int]
    ) -> Window:
        """The snapshot, downloaded again while its download breaks off (a few times);
        SnapshotUnavailable when it never arrives whole. A cut body is not a bad
        snapshot: only a whole one is read (and, if untrusted, replaced)."""
        for attempt in range(1, DOWNLOAD_ATTEMPTS + 1):
            try:
                return self.download_window(lane_path, epoch, rules, articles)
            except (OSError, http.client.HTTPException) as exc:
                log.warning(
                    "%s: the snapshot download broke off (%r), attempt %s of %s",
                    self.name,
                    exc,
                    attempt,
                    DOWNLOAD_ATTEMPTS,
                )
                if attempt == DOWNLOAD_ATTEMPTS or self.control.stop.wait(
                    self.backoff.next_delay()
                ):
                    raise SnapshotUnavailable(f"its download broke off ({exc!r})") from exc
        raise AssertionError("unreachable")

    def download_window(
        self,
        lane_path: str,
        epoch: int,
        rules: RuleSet,
        articles: tuple[int, int] = (0, MAX_ARTICLE),
    ) -> Window:
        with tempfile.TemporaryFile(dir=self.settings.work_dir) as spool:
            # With object storage the coordinator redirects to a presigned URL.
            _, response = self.coordinator.open_followed(f"{lane_path}/snapshot", {"epoch": epoch})
            with response:
                while chunk := response.read(256 * 1024):
                    spool.write(chunk)
                if response.length:  # the body ended before its Content-Length
                    raise http.client.IncompleteRead(b"", response.length)
            spool.seek(0)
            return Window.restore(spool, rules, max_open=self.settings.max_open, articles=articles)

    def reset_window(
        self,
        lane_path: str,
        epoch: int,
        group: str,
        rules: RuleSet,
        snapshot: dict[str, Any],
        cause: str,
    ) -> Window:
        position = snapshot.get("next")
        log.warning(
            "%s: %s; the window of %s starts empty at article %s", self.name, cause, group, position
        )
        self.stats.add(snapshot_resets=1)
        window = Window(rules, group, max_open=self.settings.max_open)
        if isinstance(position, int):
            self.upload_snapshot(lane_path, epoch, window, position)
        return window

    def upload_snapshot(self, lane_path: str, epoch: int, window: Window, position: int) -> bool:
        """PUT the window, streamed from a temporary file; False if the coordinator refused
        it, or answered 429 (another upload of the lane streams) UPLOAD_BUSY_ATTEMPTS times."""
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
                    busy_attempts=UPLOAD_BUSY_ATTEMPTS,
                )
            except (LeaseLost, NotFound, CoordinatorError) as exc:
                if isinstance(exc, Unauthenticated):
                    raise
                log.warning("%s: snapshot refused: %s", self.name, exc)
                return False
        return True
