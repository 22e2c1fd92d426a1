"""Snapshot files: a lane's serialized window, streamed to disk and replaced whole.

A busy group's window is gigabytes, so a snapshot is never held in memory:
the body is written chunk by chunk to a `.part` file beside the snapshot,
fsynced, then renamed over the old one (and the directory fsynced), so a
reader sees the old snapshot or the new one, never half of one. Anything
that goes wrong on the way (a short body, a disconnect, the size limit)
removes the `.part` and leaves the old snapshot in place.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from django.conf import settings

from indexer.api.errors import ApiError, Invalid, TooLarge

from .models import Lane

CHUNK_BYTES = 1 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
NAME_LIMIT = 180


def snapshot_dir() -> Path:
    return Path(settings.SNAPSHOT_DIR)


def file_stem(group_id: int, group_name: str) -> str:
    """A group name made safe as a file name; names that had to change get their id."""
    safe = _UNSAFE.sub("_", group_name)[:NAME_LIMIT]
    if safe != group_name or not safe.strip(".") or safe.startswith("."):
        safe = f"{safe.lstrip('.')}_{group_id}"
    return safe


def snapshot_path(group_id: int, group_name: str, lane: str) -> Path:
    suffix = "-tail" if lane == Lane.TAIL else ""
    return snapshot_dir() / f"{file_stem(group_id, group_name)}{suffix}.gz"


def part_path(final: Path, epoch: int) -> Path:
    # One .part per hand-out: a fenced-off holder still uploading cannot
    # write into the current holder's file.
    return final.with_name(f"{final.name}.{epoch}.part")


def write_part(part: Path, chunks: Iterable[bytes], expected: int | None, limit: int) -> int:
    """Stream chunks into `part`, fsynced; returns the size. Removes `part` on any failure."""
    part.parent.mkdir(parents=True, exist_ok=True)
    size = 0
    try:
        with open(part, "wb") as out:
            try:
                for chunk in chunks:
                    size += len(chunk)
                    if size > limit:
                        raise TooLarge(f"The snapshot is over SNAPSHOT_MAX_BYTES ({limit} bytes).")
                    out.write(chunk)
            except ApiError:
                raise
            except Exception as exc:  # the client went away mid-body
                raise Invalid(f"The upload was interrupted after {size} bytes ({exc}).") from exc
            if expected is not None and size != expected:
                raise Invalid(
                    f"The body ended after {size} of {expected} bytes (Content-Length): "
                    "the upload was interrupted; send the snapshot again."
                )
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return size


def install(part: Path, final: Path) -> None:
    """Rename the finished part over the snapshot and make the rename durable."""
    os.replace(part, final)
    directory = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
