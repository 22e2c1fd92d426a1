"""Reading one range: overview lines into a Window, batches to the Reporter.

See docs/seed-node.md ("Batches and next") for what a batch's ``next`` promises.
"""

from __future__ import annotations

import bisect
import json
import time
from array import array
from typing import Any

from usenet.limits import (
    MAX_ARTICLE,
    MAX_BATCH_BYTES,
    MAX_DATE,
    MAX_FILES_PER_BATCH,
    MAX_SEGMENT_BYTES,
    MAX_TOTAL,
)
from usenet.overview import parse_over_line

from .aggregate import Window
from .control import Context
from .leases import Lease
from .reporting import Reporter, reportable
from .sources import CHUNK

_CHECK_EVERY = 512  # lines between looks at the clock, the stop flag and the batch size


class Stopped(Exception):
    """The range was left before its end: a stop request, or the lease was lost."""


class RangeReader:
    """Reads one range into a Window and reports it in batches.

    ``carry``: the window goes on into the next range (window mode), so open files
    are not fragments at the end of the range; copies of the ones that grew are
    reported as fragments instead, and they stay open.
    """

    def __init__(
        self, lease: Lease, window: Window, reporter: Reporter, context: Context, *, carry: bool
    ) -> None:
        self.lease, self.window, self.reporter, self.carry = lease, window, reporter, carry
        self.source, self.settings = context.source, context.settings
        self.control, self.stats = context.control, context.stats
        self.reported = lease.start  # the `next` of the last batch handed to the reporter
        self.read_to = lease.start - 1  # every article up to here has been read
        self.fetched = False
        self._numbers = array("q")  # article numbers read and not yet below a reported next
        self._headers_at_batch = window.headers
        self._batch_due = time.monotonic() + self.settings.batch_seconds
        self._pace_start = time.monotonic()
        self._paced = 0
        self.handoff = 0.0  # seconds blocked handing batches to the reporter

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
        started, waited, handed = time.perf_counter(), self.source.waited, self.handoff
        try:
            self._parse_span(first, last)
        finally:
            # --stats: the span's time is waiting on the source, handing batches
            # over, and the rest (parsing, aggregating, building batches).
            news = self.source.waited - waited
            handoff = self.handoff - handed
            parse = time.perf_counter() - started - news - handoff
            self.stats.add(news_seconds=news, parse_seconds=max(0.0, parse))

    def _parse_span(self, first: int, last: int) -> None:
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
        # A drained window can hold more files, or more bytes, than the coordinator
        # takes in one batch. Those sent first keep the previous next; only the
        # last moves it.
        *first, (files, fragments) = split_batches(files, fragments)
        for some_files, some_fragments in first:
            self._submit(previous, 0, some_files, some_fragments)
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
        started = time.perf_counter()
        self.reporter.submit(self.lease, body)
        self._handed(time.perf_counter() - started)

    def _handed(self, seconds: float) -> None:
        self.handoff += seconds
        self.stats.add(handoff_seconds=seconds)

    def settle(self) -> None:
        """Wait for the reporter; raise Stopped if the lease was lost meanwhile."""
        started = time.perf_counter()
        self.reporter.flush()
        self._handed(time.perf_counter() - started)
        if self.lease.lost:
            raise Stopped


# Bytes of a batch besides its files: the keys, epoch, next, headers.
_BATCH_OVERHEAD = 200


def split_batches(
    files: list[dict[str, Any]], fragments: list[dict[str, Any]]
) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Files and fragments cut into batches of at most MAX_FILES_PER_BATCH of each
    and MAX_BATCH_BYTES of JSON (as the coordinator client encodes it), in order.

    Files as `reportable()` leaves them. Nearly always they fit one batch, which a
    bound on their JSON's length shows without encoding them (encoding each file
    to measure it cost the agent 0.8 us a header, docs/performance.md).
    """
    if (
        len(files) <= MAX_FILES_PER_BATCH
        and len(fragments) <= MAX_FILES_PER_BATCH
        and _BATCH_OVERHEAD + json_length_bound(files) + json_length_bound(fragments)
        <= MAX_BATCH_BYTES
    ):
        return [(files, fragments)]
    batches: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    current: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], [])
    size = _BATCH_OVERHEAD
    items = [(0, item) for item in files] + [(1, item) for item in fragments]
    for kind, item in items:
        item_size = len(json.dumps(item, separators=(",", ":"))) + 1
        full = size + item_size > MAX_BATCH_BYTES or len(current[kind]) >= MAX_FILES_PER_BATCH
        if full and (current[0] or current[1]):
            batches.append(current)
            current, size = ([], []), _BATCH_OVERHEAD
        current[kind].append(item)
        size += item_size
    batches.append(current)
    return batches


# JSON's longest spelling of one character: one outside the BMP, as "\ud83d\ude00".
_JSON_CHARACTER = 12
_FILE_KEYS = {"subject", "poster", "date", "total", "segments"}
# A File's JSON but its two texts and its segments, its numbers at their longest,
# and the comma before the next file.
_FILE_JSON = len('{"subject":"","poster":"","date":,"total":,"segments":[]},') + len(
    f"{MAX_DATE}{MAX_TOTAL}"
)
# A segment's JSON but its message-id's characters: [part,article,"id",bytes],
_SEGMENT_JSON = len('[,,"",],') + len(f"{MAX_TOTAL}{MAX_ARTICLE}{MAX_SEGMENT_BYTES}")


def json_length_bound(items: list[dict[str, Any]]) -> int:
    """At least the length of the JSON of files as `reportable()` leaves them, each
    with the comma that follows it (`split_batches` counts them so), found from
    the lengths of their texts. reportable() has checked their segments' numbers
    and message-ids; a file of another shape, or whose date or total is no int,
    gives MAX_BATCH_BYTES + 1 (measure it by encoding it)."""
    bound = 0
    for item in items:
        if (
            item.keys() != _FILE_KEYS
            or type(item["date"]) is not int
            or not 0 <= item["date"] <= MAX_DATE
            or type(item["total"]) is not int
            or not 1 <= item["total"] <= MAX_TOTAL
        ):
            return MAX_BATCH_BYTES + 1
        segments = item["segments"]
        characters = len(item["subject"]) + len(item["poster"])
        characters += sum([len(segment[2]) for segment in segments])
        bound += _FILE_JSON + len(segments) * _SEGMENT_JSON + characters * _JSON_CHARACTER
    return bound
