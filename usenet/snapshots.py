"""The lane snapshot format: a window's open files as gzip'd JSON lines, read as untrusted input.

One node writes a snapshot (``seed_node.aggregate.Window.serialize``), the
next holder of the lane reads it (``Window.restore``), and the coordinator
checks each upload as it streams past (``SnapshotCheck``, leases/snapshots.py)
and refuses one the next holder could not trust. All three read with the code
below, so they cannot drift apart. The format: docs/seed-node.md ("The
window"); the limits: docs/security.md ("Hostile Usenet input"). No Django.

A snapshot is read in bounded memory and time whatever it holds: each line is
at most ``MAX_SNAPSHOT_LINE`` bytes and ``MAX_LINE_VALUES`` JSON values, counted
before the line is parsed (so parsing one costs at most about ten times its
length, never the ~24 bytes of objects per byte that ``[[],[],...]`` would
build); the stream decompresses to at most ``MAX_SNAPSHOT_RATIO`` times its
compressed size (after the first ``RATIO_ALLOWANCE`` bytes) and
``MAX_SNAPSHOT_BYTES`` in all, never more than a block at a time; and it holds
at most ``max_open`` open files and as many fragments (``FileCount``).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from .limits import MAX_ARTICLE, MAX_POSTER, MAX_SUBJECT, MAX_TOTAL
from .rules import RuleSet

SNAPSHOT_FORMAT = 1
COUNTER_NAMES = (
    "headers",
    "malformed",
    "non_binary",
    "excluded",
    "binary",
    "duplicates",
    "conflicts",
    "evicted",
)
# One file's line: its fields (~1,500 characters) and 100,000 segments of up to
# ~160 bytes (part, article, a message-id of ~120 characters, bytes; real ones
# are ~90 bytes).
MAX_SNAPSHOT_LINE = 16 << 20
# A file is one object of a few fields; each of its segments a list of four
# values (five with the list). Every value but the first follows a `,` or opens
# with `[` or `{`, so counting those bytes bounds the objects json.loads would
# build; the slack covers such bytes inside a subject and a poster.
MAX_LINE_VALUES = 5 * MAX_TOTAL + 16 + MAX_SUBJECT + MAX_POSTER
MAX_SNAPSHOT_BYTES = 64 << 30  # decompressed, all lines: a gzip bomb stops here
# Decompressed bytes per compressed byte past the first RATIO_ALLOWANCE: real
# windows compress 2-3 times, windows of near-identical files ~170 times;
# gzip's own limit is ~1,030 (so a small body cannot ask for hours of checking).
MAX_SNAPSHOT_RATIO = 256
RATIO_ALLOWANCE = MAX_SNAPSHOT_LINE
# The window's size by default: the agent's --max-open, the coordinator's
# SNAPSHOT_MAX_OPEN.
DEFAULT_MAX_OPEN = 200_000
_BLOCK = 1 << 20  # decompressed bytes produced at a time
_GZIP = 16 + zlib.MAX_WBITS  # zlib reads a gzip member (header and trailer checked)


class SnapshotError(ValueError):
    """A snapshot that cannot be trusted: the message says what is wrong with it."""


class GzipLines:
    """The lines of a gzip stream handed over in pieces of any size.

    ``feed`` yields every line completed so far, ``end`` the last one (which may
    lack its newline) once the stream is whole. Concatenated gzip members read
    as one stream, as gzip(1) reads them. Memory stays under one line plus one
    block: a line over ``MAX_SNAPSHOT_LINE`` is an error as soon as it is, and
    so is a stream that decompresses to over ``MAX_SNAPSHOT_RATIO`` times what
    was fed (past ``RATIO_ALLOWANCE``) or over ``max_bytes`` in all.
    """

    def __init__(self, max_bytes: int = MAX_SNAPSHOT_BYTES) -> None:
        self._inflate = zlib.decompressobj(_GZIP)
        self._in_member = False
        self._pending = bytearray()
        self._total = 0
        self._fed = 0
        self._max_bytes = max_bytes

    def feed(self, data: bytes) -> Iterator[bytes]:
        self._fed += len(data)
        while True:
            if data:
                self._in_member = True
            try:
                out = self._inflate.decompress(data, _BLOCK)
            except zlib.error as error:
                raise SnapshotError(f"it is not a readable gzip stream ({error})") from None
            yield from self._lines(out)
            if self._inflate.eof:
                data = self._inflate.unused_data
                self._inflate = zlib.decompressobj(_GZIP)
                self._in_member = False
                if data:
                    continue
                return
            data = self._inflate.unconsumed_tail
            if not data and len(out) < _BLOCK:
                return

    def end(self) -> Iterator[bytes]:
        if self._in_member:
            raise SnapshotError("it is not a readable gzip stream (it ends inside a gzip member)")
        if self._pending:
            yield bytes(self._pending)
            self._pending.clear()

    def _lines(self, out: bytes) -> Iterator[bytes]:
        self._total += len(out)
        if self._total > self._max_bytes:
            raise SnapshotError(f"it decompresses to over {self._max_bytes} bytes")
        if self._total > RATIO_ALLOWANCE + MAX_SNAPSHOT_RATIO * self._fed:
            raise SnapshotError(
                f"it decompresses to over {MAX_SNAPSHOT_RATIO} times its compressed size"
                f" ({self._total} bytes from {self._fed})"
            )
        start = 0
        while (newline := out.find(b"\n", start)) >= 0:
            if self._pending:
                self._pending += out[start : newline + 1]
                line = bytes(self._pending)
                self._pending.clear()
            else:
                line = out[start : newline + 1]
            if len(line) > MAX_SNAPSHOT_LINE:
                raise SnapshotError(f"a line is over {MAX_SNAPSHOT_LINE} bytes")
            start = newline + 1
            yield line
        self._pending += out[start:]
        if len(self._pending) > MAX_SNAPSHOT_LINE:
            raise SnapshotError(f"a line is over {MAX_SNAPSHOT_LINE} bytes")


def snapshot_lines(chunks: Iterable[bytes], max_bytes: int = MAX_SNAPSHOT_BYTES) -> Iterator[bytes]:
    """The lines of a gzip'd snapshot read from ``chunks`` (see GzipLines)."""
    lines = GzipLines(max_bytes)
    for chunk in chunks:
        yield from lines.feed(chunk)
    yield from lines.end()


def decoded(line: bytes) -> Any:
    """A line's JSON value; SnapshotError when it is none (or nests past the parser).

    The values are counted first (C-speed byte counts): a line of more than
    ``MAX_LINE_VALUES`` is refused before json.loads builds a single object.
    """
    values = line.count(b",") + line.count(b"[") + line.count(b"{")
    if values > MAX_LINE_VALUES:
        raise SnapshotError(f"a line holds over {MAX_LINE_VALUES} JSON values")
    try:
        return json.loads(line)
    except (ValueError, RecursionError) as error:  # ValueError: also a line not UTF-8
        raise SnapshotError(f"a line is not JSON ({str(error)[:200]})") from None


def checked_header(line: bytes) -> dict[str, Any]:
    """The header line (format, group, rules version, limits, counters); else SnapshotError."""
    header = decoded(line) if line else None
    if not isinstance(header, dict):
        raise SnapshotError("it has no header line")
    if header.get("format") != SNAPSHOT_FORMAT:
        raise SnapshotError(f"its format {header.get('format')!r} is not {SNAPSHOT_FORMAT}")
    counters = header.get("counters")
    limit = header.get("max_open")
    version = header.get("rules_version")
    if not isinstance(header.get("group"), str) or not isinstance(counters, dict):
        raise SnapshotError("its header lacks the group or the counters")
    if type(limit) is not int or limit < 1:
        raise SnapshotError("its header's max_open is not a positive integer")
    if type(version) is not int or version < 1:
        raise SnapshotError("its header's rules_version is not a positive integer")
    if not all(
        name in COUNTER_NAMES and type(value) is int and value >= 0
        for name, value in counters.items()
    ):
        raise SnapshotError("its header has unknown or negative counters")
    return header


def checked_file(stored: Any) -> dict[str, Any]:
    """A File dict whose every field the window may use as it is; else SnapshotError."""
    if not isinstance(stored, dict):
        raise SnapshotError("a file line is not an object")
    subject, poster, date, total = (stored.get(k) for k in ("subject", "poster", "date", "total"))
    segments = stored.get("segments")
    if not (
        isinstance(subject, str)
        and len(subject) <= MAX_SUBJECT
        and isinstance(poster, str)
        and len(poster) <= MAX_POSTER
        and (date is None or type(date) is int)
        and type(total) is int
        and 1 <= total <= MAX_TOTAL
        and isinstance(segments, list)
        and 1 <= len(segments) <= total
        and isinstance(stored.get("fragment", False), bool)
    ):
        raise SnapshotError("a file has a missing or out-of-range field")
    for segment in segments:
        if not (
            isinstance(segment, list)
            and len(segment) == 4
            and type(segment[0]) is int
            and 1 <= segment[0] <= total
            and type(segment[1]) is int
            and segment[1] >= 0
            and type(segment[2]) is str
            and type(segment[3]) is int
        ):
            raise SnapshotError("a segment is not [part, article, message-id, bytes]")
    return stored


class FileCount:
    """How many files a snapshot may hold, counted line by line: at most
    ``max_open`` open files and as many fragments, where ``max_open`` is the
    header's and no more than the reader's ``limit`` (a node's ``--max-open``,
    the coordinator's ``SNAPSHOT_MAX_OPEN``).

    The one rule of both readers (``Window.restore`` and ``SnapshotCheck``),
    so the coordinator stores no snapshot the next holder refuses. Every file
    line counts, before it is asked whether it belongs to the lane. A window
    holds at most ``max_open`` open files, and the agent snapshots it after a
    report has taken its fragments out, so its own snapshots are far inside.
    """

    def __init__(self, header: dict[str, Any], limit: int) -> None:
        self.max_open = min(header["max_open"], limit)
        self.open = 0
        self.fragments = 0

    def count(self, stored: dict[str, Any]) -> None:
        """Count a checked file (``checked_file``); SnapshotError past the bound."""
        if stored.get("fragment"):
            self.fragments += 1
            if self.fragments > self.max_open:
                raise SnapshotError(f"it holds more than {self.max_open} fragments")
        else:
            self.open += 1
            if self.open > self.max_open:
                raise SnapshotError(f"it holds more than {self.max_open} open files")


@dataclass(frozen=True)
class LaneScope:
    """What a lane's snapshot may hold: files of binary posts under the lease's rules,
    with every segment at an article of the lane (``first``..``last``, inclusive).

    A file that falls outside is foreign: reported by the next holder it would
    enter the catalog under that holder's name, so it is dropped (the agent) or
    the snapshot refused (the coordinator). The window itself only ever holds
    files that fit (docs/window-indexing.md, "Snapshots").
    """

    rules: RuleSet
    first: int = 0
    last: int = MAX_ARTICLE

    def misfit(self, stored: dict[str, Any]) -> str | None:
        """Why a checked file (``checked_file``) does not belong to the lane, or None."""
        subject = stored["subject"]
        counter = self.rules.split_segment_counter(subject)
        if counter is None:
            return f"{_quoted(subject)} is not a binary post under rule set {self.rules.version}"
        if counter.total != stored["total"]:
            return f"{_quoted(subject)} has {counter.total} parts, not its total {stored['total']}"
        if self.rules.excludes_poster(stored["poster"]):
            return f"{_quoted(subject)} is by a poster rule set {self.rules.version} excludes"
        for _part, article, _message_id, _size in stored["segments"]:
            if not self.first <= article <= self.last:
                return (
                    f"{_quoted(subject)} has article {article}, outside the lane's "
                    f"articles {self.first}..{self.last}"
                )
        return None


def _quoted(subject: str) -> str:
    """A subject as a message shows it: short, quoted, control characters escaped."""
    return f"the file {subject[:60]!r}"


class SnapshotCheck:
    """Checks a lane's snapshot as its gzip bytes stream past; SnapshotError names the fault.

    ``group`` is the lane's group, ``first``..``last`` its articles and
    ``rules_of`` finds the rule set a header names (LookupError if none). The
    same checks as ``Window.restore`` (the same ``FileCount``, with ``max_open``
    the coordinator's own bound), plus the group and the rule set version.
    """

    def __init__(
        self,
        group: str,
        first: int,
        last: int,
        rules_of: Callable[[int], RuleSet],
        max_open: int = DEFAULT_MAX_OPEN,
    ) -> None:
        self._group = group
        self._span = (first, last)
        self._rules_of = rules_of
        self._limit = max_open
        self._lines = GzipLines()
        self._scope: LaneScope | None = None
        self._count: FileCount | None = None
        self._number = 0

    def feed(self, data: bytes) -> None:
        for line in self._lines.feed(data):
            self._line(line)

    def end(self) -> None:
        for line in self._lines.end():
            self._line(line)
        if self._scope is None:
            raise SnapshotError("it has no header line")

    def _line(self, line: bytes) -> None:
        self._number += 1
        try:
            if self._scope is None:
                self._scope = self._header(line)
            else:
                self._file(self._scope, line)
        except SnapshotError as error:
            raise SnapshotError(f"line {self._number}: {error}") from None

    def _header(self, line: bytes) -> LaneScope:
        header = checked_header(line)
        if header["group"] != self._group:
            raise SnapshotError(f"it is of {header['group'][:300]!r}, not {self._group!r}")
        try:
            rules = self._rules_of(header["rules_version"])
        except LookupError:
            raise SnapshotError(
                f"its rule set version {header['rules_version']} was never published"
            ) from None
        self._count = FileCount(header, self._limit)
        return LaneScope(rules, *self._span)

    def _file(self, scope: LaneScope, line: bytes) -> None:
        stored = checked_file(decoded(line))
        assert self._count is not None  # set with the scope
        self._count.count(stored)
        reason = scope.misfit(stored)
        if reason is not None:
            raise SnapshotError(f"{reason}: it does not belong to the lane")
