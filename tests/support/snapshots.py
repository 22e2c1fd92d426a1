"""Lane snapshots for tests: bodies the coordinator takes, and ones it must refuse.

The coordinator checks every upload against the format and the lane
(usenet/snapshots.py), so tests upload real snapshots: a header and File
lines, gzip'd. ``window_snapshot`` builds one in memory; ``snapshot_file``
writes a large one to disk (stored, not compressed, so its size on the wire
is what the test asks for).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

GZIP = 16 + zlib.MAX_WBITS


def header(group_name: str, **change: Any) -> dict[str, Any]:
    fields = {
        "format": 1,
        "group": group_name,
        "rules_version": 1,
        "max_open": 200_000,
        "counters": {},
    }
    return {**fields, **change}


def file_entry(
    article: int, name: str = "a.rar", total: int = 3, parts: Iterable[int] = (1,), **change: Any
) -> dict[str, Any]:
    """An open file of the window: segments of `name` from `article` on, one per part."""
    fields = {
        "subject": f'"{name}" yEnc ({min(parts)}/{total})',
        "poster": "poster <p@example.com>",
        "date": 1_700_000_000,
        "total": total,
        "segments": [
            [part, article + i, f"<{name}.{part}@example.com>", 500] for i, part in enumerate(parts)
        ],
    }
    return {**fields, **change}


def lines_of(head: dict[str, Any], files: Iterable[dict[str, Any]]) -> Iterator[bytes]:
    yield json.dumps(head, separators=(",", ":")).encode() + b"\n"
    for entry in files:
        yield json.dumps(entry, separators=(",", ":")).encode() + b"\n"


def gzipped(lines: Iterable[bytes], level: int = 6) -> bytes:
    packer = zlib.compressobj(level, zlib.DEFLATED, GZIP)
    return b"".join(packer.compress(line) for line in lines) + packer.flush()


def window_snapshot(
    group_name: str, files: Iterable[dict[str, Any]] = (), level: int = 6, **head: Any
) -> bytes:
    """A snapshot of a lane of `group_name` (stored when its files lie at the lane's
    articles); `head` changes header fields."""
    return gzipped(lines_of(header(group_name, **head), files), level)


def padded_files(article: int, size: int, tag: str = "pad") -> Iterator[dict[str, Any]]:
    """Open files at `article` with long subjects, about `size` bytes of lines in all."""
    filler = tag * (800 // max(1, len(tag)))
    entry = file_entry(article, name=f"{filler}-{0:08d}.rar", total=2)
    count = max(1, size // len(json.dumps(entry, separators=(",", ":"))))
    for n in range(count):
        yield file_entry(article, name=f"{filler}-{n:08d}.rar", total=2)


def snapshot_file(path: Path, group: str, article: int, size: int, tag: str = "pad") -> Path:
    """Write a valid snapshot of about `size` bytes (gzip, stored blocks) to `path`."""
    packer = zlib.compressobj(0, zlib.DEFLATED, GZIP)
    with path.open("wb") as out:
        for line in lines_of(header(group), padded_files(article, size, tag)):
            out.write(packer.compress(line))
        out.write(packer.flush())
    return path


def file_chunks(path: Path, chunk: int = 1 << 20) -> Iterator[bytes]:
    with path.open("rb") as stream:
        while piece := stream.read(chunk):
            yield piece
