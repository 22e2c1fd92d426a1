"""The window: binary segments gathered into files while a node reads a group.

A file leaves it complete, or as a fragment when it goes quiet, the window is
full or closes. A window can be snapshotted and restored on another node; the
file format and the order-independence rules: docs/seed-node.md ("The window").
"""

from __future__ import annotations

import gzip
import heapq
import json
import sys
from collections.abc import Iterable
from typing import IO, Any

from usenet.limits import MAX_ARTICLE
from usenet.overview import Overview, parse_over_line
from usenet.rules import RuleSet, file_key
from usenet.snapshots import (
    COUNTER_NAMES,
    MAX_SNAPSHOT_BYTES,
    SNAPSHOT_FORMAT,
    FileCount,
    LaneScope,
    SnapshotError,
    checked_file,
    checked_header,
    decoded,
    snapshot_lines,
)

__all__ = ["SnapshotError", "Window"]

# Evicting a sliver of the window at a time keeps eviction amortized O(1) per line.
_EVICT_FRACTION = 64
# Identities of recent (poster, subject shape, total) combinations; cleared when full.
_KEY_CACHE_LIMIT = 1 << 17
_EXCLUDED = b""  # cached in place of a key for posters the rules exclude
_COUNTER_NAMES = COUNTER_NAMES

Segment = tuple[int, str, int]  # article, message-id, bytes

# A snapshot is read as untrusted input (another node wrote it): each line, the
# whole decompressed stream and every collection are bounded, every field is
# checked before it is used and every file against the lane (usenet/snapshots.py;
# docs/security.md, "Hostile Usenet input").
_READ_BYTES = 256 * 1024


class _OpenFile:
    __slots__ = (
        "date",
        "first_part",
        "newest",
        "oldest",
        "poster",
        "reported",
        "segments",
        "subject",
        "total",
    )

    def __init__(self, subject: str, part: int, poster: str, date: int | None, total: int):
        self.subject = subject
        self.first_part = part  # the part whose subject we keep
        self.poster = poster
        self.date = date
        self.total = total
        self.segments: dict[int, Segment] = {}
        self.newest = 0  # highest article number seen
        self.oldest = sys.maxsize  # lowest article number seen
        self.reported = 0  # segments held when last copied out by take_open_copies

    def as_file(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "poster": self.poster,
            "date": self.date,
            "total": self.total,
            "segments": [[part, *self.segments[part]] for part in sorted(self.segments)],
        }


class Window:
    """Open files of one group, keyed by file key, with bounded memory."""

    def __init__(self, rules: RuleSet, group: str, *, max_open: int = 200_000) -> None:
        if max_open < 1:
            raise ValueError("max_open must be at least 1.")
        self.rules = rules
        self.group = group
        self.max_open = max_open
        self.headers = 0
        self.malformed = 0
        self.non_binary = 0
        self.excluded = 0
        self.binary = 0
        self.duplicates = 0  # the same part again with the same message-id
        self.conflicts = 0  # the same part again with another message-id
        self.evicted = 0
        self._open: dict[bytes, _OpenFile] = {}
        self._completed: list[bytes] = []
        self._fragments: list[dict[str, Any]] = []  # evicted, waiting to be taken
        self._keys: dict[tuple[str, str, str, int], bytes] = {}
        self.dropped = 0  # files of a restored snapshot that did not belong to the lane
        self.drop_reason: str | None = None  # why the first of them did not

    def __len__(self) -> int:
        return len(self._open)

    def counters(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in _COUNTER_NAMES}

    # --- feeding --------------------------------------------------------------------

    def add_line(self, line: bytes) -> None:
        """Add one raw overview line; a malformed one is counted and skipped."""
        overview = parse_over_line(line)
        if overview is None:
            self.headers += 1
            self.malformed += 1
        else:
            self.add(overview)

    def add_lines(self, lines: Iterable[bytes]) -> None:
        for line in lines:
            self.add_line(line)

    def add(self, overview: Overview) -> None:
        """Add one post; a post that is not a binary segment is only counted."""
        self.headers += 1
        article, subject, poster, date, message_id, size = overview
        counter = self.rules.split_segment_counter(subject)
        if counter is None:
            self.non_binary += 1
            return
        head, part, total, tail = counter
        identity = (poster, head, tail, total)
        key = self._keys.get(identity)
        if key is None:
            key = self._identify(poster, head, tail, total)
            if len(self._keys) >= _KEY_CACHE_LIMIT:
                self._keys.clear()
            self._keys[identity] = key
        if key is _EXCLUDED:
            self.excluded += 1
            return
        self.binary += 1
        self._put(key, subject, poster, date, total, part, (article, message_id, size))

    def _identify(self, poster: str, head: str, tail: str, total: int) -> bytes:
        if self.rules.excludes_poster(poster):
            return _EXCLUDED
        key_subject = self.rules.shape(head, tail).key_subject
        return file_key(self.group, poster, key_subject, total)

    def _put(
        self,
        key: bytes,
        subject: str,
        poster: str,
        date: int | None,
        total: int,
        part: int,
        segment: Segment,
    ) -> None:
        open_file = self._open.get(key)
        if open_file is None:
            if len(self._open) >= self.max_open:
                self._evict_oldest()
            open_file = self._open[key] = _OpenFile(subject, part, poster, date, total)
        else:
            if part < open_file.first_part or (
                part == open_file.first_part and subject < open_file.subject
            ):
                open_file.subject, open_file.first_part = subject, part
            if date is not None and (open_file.date is None or date < open_file.date):
                open_file.date = date
        if segment[0] > open_file.newest:
            open_file.newest = segment[0]
        if segment[0] < open_file.oldest:
            open_file.oldest = segment[0]
        segments = open_file.segments
        held = segments.get(part)
        if held is None:
            segments[part] = segment
            if len(segments) == total:
                self._completed.append(key)
        elif held[1] == segment[1]:
            self.duplicates += 1
        else:
            self.conflicts += 1
            if segment[0] < held[0]:
                segments[part] = segment

    def _evict_oldest(self) -> None:
        # The files whose newest segment is oldest are the least likely to grow.
        complete = set(self._completed)
        candidates = ((f.newest, key) for key, f in self._open.items() if key not in complete)
        count = max(1, self.max_open // _EVICT_FRACTION)
        for _newest, key in heapq.nsmallest(count, candidates):
            self._fragments.append(self._open.pop(key).as_file())
            self.evicted += 1

    # --- taking files out -----------------------------------------------------------

    def take_complete(self) -> list[dict[str, Any]]:
        """Pop the files that have all their parts, as File dicts."""
        files = []
        for key in self._completed:
            open_file = self._open.pop(key, None)
            if open_file is not None:
                files.append(open_file.as_file())
        self._completed = []
        return files

    def take_fragments_before(self, article: int) -> list[dict[str, Any]]:
        """Pop incomplete files whose newest segment is older than ``article``.

        Also returns the files evicted since the last call. Complete files stay for
        ``take_complete``.
        """
        complete = set(self._completed)
        stale = [
            key
            for key, open_file in self._open.items()
            if open_file.newest < article and key not in complete
        ]
        fragments, self._fragments = self._fragments, []
        fragments.extend(self._open.pop(key).as_file() for key in stale)
        return fragments

    def oldest_open_article(self) -> int | None:
        """The lowest article number held in the window and not taken out yet.

        A node that reports ``next`` no higher than this never skips a segment it
        holds: a node taking the range over reads every held segment again.
        """
        oldest = min((f.oldest for f in self._open.values()), default=None)
        for fragment in self._fragments:
            first = min(segment[1] for segment in fragment["segments"])
            oldest = first if oldest is None else min(oldest, first)
        return oldest

    def take_open_copies(self) -> list[dict[str, Any]]:
        """Copies of the incomplete files that grew since the last call; they stay open.

        A window carried across range boundaries reports these as fragments at each
        range's end, so that the catalog has every segment even if no later range
        ever completes them; a file that completes later is reported whole then.
        """
        complete = set(self._completed)
        copies = []
        for key, open_file in self._open.items():
            if key not in complete and len(open_file.segments) != open_file.reported:
                open_file.reported = len(open_file.segments)
                copies.append(open_file.as_file())
        return copies

    def drain(self) -> list[dict[str, Any]]:
        """Pop every incomplete file: the window closes. Call ``take_complete`` first."""
        return self.take_fragments_before(sys.maxsize)

    # --- snapshots ------------------------------------------------------------------

    def serialize(self, fp: IO[bytes], *, compresslevel: int = 5) -> None:
        """Write the window to a binary file as gzip'd JSON lines, one file per line.

        The first line is a header (format, group, rules version, limits, counters);
        each further line is a File dict, with ``"fragment": true`` on evicted files
        not taken yet. Written line by line: a window of millions of files never
        becomes one string. ``fp`` stays open.
        """
        header = {
            "format": SNAPSHOT_FORMAT,
            "group": self.group,
            "rules_version": self.rules.version,
            "max_open": self.max_open,
            "counters": self.counters(),
        }
        encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        with gzip.GzipFile(fileobj=fp, mode="wb", compresslevel=compresslevel) as stream:
            stream.write(encode(header).encode("utf-8") + b"\n")
            for open_file in self._open.values():
                stream.write(encode(open_file.as_file()).encode("utf-8") + b"\n")
            for fragment in self._fragments:
                stream.write(encode({**fragment, "fragment": True}).encode("utf-8") + b"\n")

    @classmethod
    def restore(
        cls,
        fp: IO[bytes],
        rules: RuleSet,
        *,
        max_open: int = 200_000,
        max_bytes: int = MAX_SNAPSHOT_BYTES,
        articles: tuple[int, int] = (0, MAX_ARTICLE),
    ) -> Window:
        """Read a window written by ``serialize``, under ``rules``; SnapshotError if untrusted.

        File keys are derived again from each file's subject, so a snapshot taken
        under an older rule set is regrouped under the new one. A file, open or
        fragment, that does not belong to the lane is dropped and counted in
        ``dropped`` (``drop_reason`` says why the first was): one that is not
        binary under ``rules``, whose total is not its subject's, whose poster
        the rules exclude, or with a segment outside ``articles`` (the lane's
        first and last article, from the lease). More than ``max_open`` open
        files (fewer if the header says so) or as many fragments, the
        coordinator's rule (``FileCount``), a malformed line or field, or more
        than ``max_bytes`` decompressed bytes is a SnapshotError
        (usenet/snapshots.py).
        """
        scope = LaneScope(rules, *articles)
        lines = snapshot_lines(iter(lambda: fp.read(_READ_BYTES), b""), max_bytes)
        header = checked_header(next(lines, b""))
        count = FileCount(header, max_open)
        window = cls(rules, header["group"], max_open=count.max_open)
        for name, value in header["counters"].items():
            setattr(window, name, value)
        for line in lines:
            stored = checked_file(decoded(line))
            count.count(stored)
            window._restore_file(scope, stored)
        return window

    def _restore_file(self, scope: LaneScope, stored: dict[str, Any]) -> None:
        reason = scope.misfit(stored)
        if reason is not None:
            self.dropped += 1
            self.drop_reason = self.drop_reason or reason
            return
        if stored.pop("fragment", False):
            self._fragments.append(stored)
            return
        subject, poster = stored["subject"], stored["poster"]
        counter = self.rules.split_segment_counter(subject)
        assert counter is not None  # misfit() read it
        key = self._identify(poster, counter.head, counter.tail, counter.total)
        for part, article, message_id, size in stored["segments"]:
            # The stored subject is that of the lowest part, so it is kept.
            self._put(
                key,
                subject,
                poster,
                stored["date"],
                counter.total,
                part,
                (article, message_id, size),
            )
