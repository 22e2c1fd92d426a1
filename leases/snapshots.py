"""Snapshot files: a lane's serialized window, checked as it streams to disk, replaced whole.

A busy group's window is gigabytes, so a snapshot is never held in memory:
the body is checked chunk by chunk as it passes (``checked_body``: the size,
the format and the lane, usenet/snapshots.py; the free space the limits keep)
and written to a `.part` file of its own beside the snapshot (two uploads
never share one), fsynced, then renamed over the old one (and the directory
fsynced) once the database has recorded it, so a reader sees the old
snapshot or the new one, never half of one, and the file always matches the
row. Anything that goes wrong on the way (a short or empty body, a body that
is no snapshot of the lane, a disconnect, the size limit, a full disk, a
failed commit) removes the `.part` and leaves the old snapshot in place.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import BinaryIO, Protocol

from django.conf import settings

from core.errors import DomainError, Invalid, StorageFull, TooLarge, Unavailable
from indexer.space import free_bytes, kept_free
from usenet.snapshots import SnapshotCheck, SnapshotError

from .models import Lane
from .upload_guard import UploadGuard

CHUNK_BYTES = 1 << 20
_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]")
NAME_LIMIT = 180
EMPTY_SNAPSHOT = (
    "The snapshot is empty: send the serialized window (a gzip file);"
    " the lane keeps its last snapshot."
)


def snapshot_dir() -> Path:
    return Path(settings.SNAPSHOT_DIR)


def file_stem(group_id: int, group_name: str) -> str:
    """The file stem of a snapshot written before names came from ids (read only)."""
    safe = _UNSAFE.sub("_", group_name)[:NAME_LIMIT]
    if safe != group_name or not safe.strip(".") or safe.startswith("."):
        safe = f"{safe.lstrip('.')}_{group_id}"
    return safe


def snapshot_path(group_id: int, lane: str) -> Path:
    """The lane's snapshot file, named by the group's id and the lane: never by its name,
    which two groups could share once made safe, and which an operator can change."""
    return snapshot_dir() / f"group-{group_id}-{Lane(lane).value}.gz"


def legacy_snapshot_path(group_id: int, group_name: str, lane: str) -> Path:
    """Where a snapshot uploaded before ids named the files lies; read until replaced."""
    suffix = "-tail" if lane == Lane.TAIL else ""
    return snapshot_dir() / f"{file_stem(group_id, group_name)}{suffix}.gz"


class Watch(Protocol):
    """What looks at an upload's bytes as they pass (the format, the disk, the guard)."""

    def chunk(self, data: bytes) -> None: ...

    def end(self) -> None: ...


def checked_body(
    chunks: Iterable[bytes], expected: int | None, limit: int, watch: Watch
) -> Iterator[bytes]:
    """The body's chunks, each checked before it is stored: the size limit, the watch.

    A body that breaks off, ends short of its Content-Length or is empty is the
    client's problem (400); the watch sees the end only of a whole body. Used
    by both stores, so a file and an object refuse the same uploads.
    """
    size = 0
    incoming = iter(chunks)
    while True:
        try:
            chunk = next(incoming, None)
        except DomainError:
            raise
        except Exception as exc:  # the client went away mid-body
            raise Invalid(f"The upload was interrupted after {size} bytes ({exc}).") from exc
        if chunk is None:
            break
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"The snapshot is over SNAPSHOT_MAX_BYTES ({limit} bytes).")
        watch.chunk(chunk)
        yield chunk
    if expected is not None and size != expected:
        raise Invalid(
            f"The body ended after {size} of {expected} bytes (Content-Length): "
            "the upload was interrupted; send the snapshot again."
        )
    if size == 0:
        raise Invalid(EMPTY_SNAPSHOT)
    watch.end()


class UploadWatch:
    """The upload's checks as its bytes stream past: the snapshot format and its lane
    (usenet/snapshots.py), the lane's upload guard and, for files, the disk's room."""

    def __init__(self, check: SnapshotCheck, guard: UploadGuard, room: DiskRoom | None) -> None:
        self._check, self._guard, self._room = check, guard, room

    def chunk(self, data: bytes) -> None:
        try:
            self._check.feed(data)
        except SnapshotError as error:
            raise Invalid(refusal(error)) from None
        self._guard.keep()
        if self._room is not None:
            self._room.chunk(len(data))

    def end(self) -> None:
        try:
            self._check.end()
        except SnapshotError as error:
            raise Invalid(refusal(error)) from None


def refusal(error: SnapshotError) -> str:
    return (
        f"The snapshot cannot be stored: {error}. Send the window as the seed node "
        'serializes it (docs/seed-node.md, "The window"); the lane keeps its last snapshot.'
    )


class DiskRoom:
    """Refuses an upload that would leave its disk less free than the limits keep.

    With a Content-Length the whole body is counted before a byte is read;
    while it streams, every chunk looks again (other lanes' uploads fill the
    same disk), counting what this one has still to write.
    """

    def __init__(self, directory: Path, expected: int | None) -> None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise disk_error(exc, "write the snapshot") from exc
        self._directory = directory
        self._kept = kept_free(directory)
        self._remaining = expected or 0
        self._look()

    def chunk(self, size: int) -> None:
        self._remaining = max(0, self._remaining - size)
        self._look()

    def _look(self) -> None:
        if self._kept <= 0:
            return
        try:
            free = free_bytes(self._directory)
        except OSError as exc:
            raise disk_error(exc, "measure the snapshot disk") from exc
        if free - self._remaining < self._kept:
            raise StorageFull(
                f"The coordinator's snapshot storage keeps {self._kept} bytes free "
                f"(SNAPSHOT_KEEP_FREE_BYTES, with the database's room under DB_MAX_BYTES "
                f"when it shares the disk); {free} are free and this upload has "
                f"{self._remaining} bytes still to write. Nothing was kept and the lane keeps "
                "its last snapshot; upload again later (an operator has to free space)."
            )


def write_part(final: Path, body: Iterable[bytes]) -> tuple[Path, int]:
    """Stream a checked body (``checked_body``) into a new `.part` beside `final`,
    fsynced; returns it and its size.

    Each call writes its own part (two overlapping uploads of one lane never
    share a file), removed on any failure. A disk that fails is the
    coordinator's problem (503: the node keeps its window and tries again).
    """
    size = 0
    part = final
    try:
        with _writing(final) as (part, out):
            for chunk in body:
                out.write(chunk)
                size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    except BaseException:
        if part != final:
            with suppress(OSError):  # a failing cleanup must not hide why the write failed
                part.unlink(missing_ok=True)
        raise
    return part, size


@contextmanager
def _writing(final: Path) -> Iterator[tuple[Path, BinaryIO]]:
    """A new `.part` beside `final`, open for writing; a failing disk becomes Unavailable."""
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=final.parent, prefix=f"{final.name}.", suffix=".part")
        with open(handle, "wb") as out:
            yield Path(name), out
    except OSError as exc:
        raise disk_error(exc, "write the snapshot") from exc


# A full disk or quota: no retry helps until space is freed (507, not 503).
FULL = frozenset({errno.ENOSPC, errno.EDQUOT})


def disk_error(exc: OSError, doing: str) -> Unavailable:
    """The domain error a failing disk becomes: StorageFull when it is full."""
    if exc.errno in FULL:
        return StorageFull(
            f"The coordinator's snapshot storage is full ({exc.strerror}): it could not "
            f"{doing}. Nothing was kept and the lane keeps its last snapshot; upload "
            "again later (an operator has to free space)."
        )
    return Unavailable(
        f"The coordinator could not {doing} ({exc.strerror or exc}); try again later."
    )


def remove_stale_parts(older_than: float | None = None) -> int:
    """Delete `.part` files no upload has written to for `older_than` seconds; returns how many.

    An upload removes its own part when it fails, but a worker killed in the
    middle (a gunicorn timeout, the OOM killer) leaves it behind, and a part
    can hold gigabytes. A live upload writes all the time, so a part untouched
    for two lease TTLs (the default) belongs to a holder long fenced off.
    Registered with seeding's maintenance (leases/apps.py).
    """
    age = 2 * settings.LEASE_TTL_SECONDS if older_than is None else older_than
    parts = list(snapshot_dir().glob("*.part"))
    if not parts:
        return 0
    cutoff = storage_now(snapshot_dir()) - age
    removed = 0
    for part in parts:
        try:
            if part.is_file() and part.stat().st_mtime < cutoff:
                part.unlink()
                removed += 1
        except FileNotFoundError:  # its upload finished or failed meanwhile
            continue
    return removed


def storage_now(directory: Path) -> float:
    """Now by the clock that stamps the directory's files: the mtime of a file made now.

    Not this host's clock: on a volume shared by several hosts the parts are
    stamped by the file server (or another host), and a host whose clock ran
    hours ahead would find every upload in flight stale (docs/reliability.md).
    """
    with tempfile.NamedTemporaryFile(dir=directory, prefix=".clock-", suffix=".probe") as probe:
        return os.fstat(probe.fileno()).st_mtime


@contextmanager
def installing(final: Path, *, shared: bool = False) -> Iterator[None]:
    """Held from the lane row's commit to the rename, across workers (a file lock).

    Of two uploads, the one that commits last is the one whose file stays; a
    reader (``shared``) opens the file that matches the row it read.
    """
    try:
        final.parent.mkdir(parents=True, exist_ok=True)
        lock = open(final.with_name(f".{final.name}.lock"), "a")
    except OSError as exc:
        raise disk_error(exc, "lock the snapshot") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def install(part: Path, final: Path) -> None:
    """Rename the finished part over the snapshot and make the rename durable."""
    os.replace(part, final)
    directory = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
