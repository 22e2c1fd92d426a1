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
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO

from django.conf import settings

from indexer.errors import DomainError, Invalid, TooLarge, Unavailable

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
    """Stream chunks into `part`, fsynced; returns the size. Removes `part` on any failure.

    A body that breaks off is the client's problem (400); a disk that fails
    is the coordinator's (503: the node keeps its window and tries again).
    """
    size = 0
    incoming = iter(chunks)
    try:
        with _writing(part) as out:
            while True:
                try:
                    chunk = next(incoming, None)
                except DomainError:
                    raise
                except Exception as exc:  # the client went away mid-body
                    raise Invalid(
                        f"The upload was interrupted after {size} bytes ({exc})."
                    ) from exc
                if chunk is None:
                    break
                size += len(chunk)
                if size > limit:
                    raise TooLarge(f"The snapshot is over SNAPSHOT_MAX_BYTES ({limit} bytes).")
                out.write(chunk)
            if expected is not None and size != expected:
                raise Invalid(
                    f"The body ended after {size} of {expected} bytes (Content-Length): "
                    "the upload was interrupted; send the snapshot again."
                )
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        with suppress(OSError):  # a failing cleanup must not hide why the write failed
            part.unlink(missing_ok=True)
        raise
    return size


@contextmanager
def _writing(part: Path) -> Iterator[BinaryIO]:
    """`part` open for writing; a failing disk (OSError) becomes Unavailable."""
    try:
        part.parent.mkdir(parents=True, exist_ok=True)
        with open(part, "wb") as out:
            yield out
    except OSError as exc:
        raise Unavailable(
            f"The coordinator could not write the snapshot ({exc.strerror or exc}); "
            "try again later."
        ) from exc


def remove_stale_parts(older_than: float | None = None) -> int:
    """Delete `.part` files no upload has written to for `older_than` seconds; returns how many.

    An upload removes its own part when it fails, but a worker killed in the
    middle (a gunicorn timeout, the OOM killer) leaves it behind, and a part
    can hold gigabytes. A live upload writes all the time, so a part untouched
    for two lease TTLs (the default) belongs to a holder long fenced off.
    Registered with seeding's maintenance (leases/apps.py).
    """
    age = 2 * settings.LEASE_TTL_SECONDS if older_than is None else older_than
    cutoff = time.time() - age
    removed = 0
    for part in snapshot_dir().glob("*.part"):
        try:
            if part.is_file() and part.stat().st_mtime < cutoff:
                part.unlink()
                removed += 1
        except FileNotFoundError:  # its upload finished or failed meanwhile
            continue
    return removed


def install(part: Path, final: Path) -> None:
    """Rename the finished part over the snapshot and make the rename durable."""
    os.replace(part, final)
    directory = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
