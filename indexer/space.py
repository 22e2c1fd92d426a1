"""Space limits: leasing pauses before the database fills its disk.

`room()` answers why the database as a whole is too big, `catalog_full()`
why the catalog's tables are, and `leasing_paused()` joins the two: it is
the `paused` reason of range leases and of the status report. Sizes are
measured at most every SPACE_CHECK_CACHE_SECONDS per process, so the lease
path stays cheap. `kept_free()` is what a disk that takes uploads (lane
snapshots) must keep free, `free_bytes()` what it has.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from .sql import queries

_lock = threading.Lock()
_cached: dict[str, tuple[float, int]] = {}


def _cached_size(query: str) -> int:
    """The size a query of sql/space.sql answers, cached per process."""
    now = time.monotonic()
    with _lock:
        hit = _cached.get(query)
        if hit is not None and now - hit[0] < settings.SPACE_CHECK_CACHE_SECONDS:
            return hit[1]
    row = queries.fetchone(query, {})
    size = int(row.size) if row and row.size is not None else 0
    with _lock:
        _cached[query] = (now, size)
    return size


def database_size() -> int:
    return _cached_size("database_size")


def forget_cached_sizes() -> None:
    """Drop cached measurements (tests and operators changing limits)."""
    with _lock:
        _cached.clear()


def _over_limit(what: str, size: Callable[[], int], setting: str, advice: str) -> str | None:
    """Why `what` is over the byte limit `setting` (0 means none), or None; sizes it only then."""
    limit = getattr(settings, setting)
    if limit <= 0:
        return None
    used = size()
    if used <= limit:
        return None
    return (
        f"{what} holds {used / 2**30:.2f} GiB, over {setting} ({limit / 2**30:.2f} GiB): {advice}"
    )


def room() -> str | None:
    """Why range leases are paused for lack of space, or None when there is room."""
    return _over_limit(
        "The database", database_size, "DB_MAX_BYTES", "prune the catalog or raise the limit."
    )


def catalog_size() -> int:
    """The catalog's tables with their indexes and TOAST (pg_total_relation_size)."""
    return _cached_size("catalog_size")


def catalog_full() -> str | None:
    """Why the catalog is full (range leases and history lanes pause), or None."""
    return _over_limit(
        "The catalog",
        catalog_size,
        "CATALOG_MAX_BYTES",
        "prune it (manage.py prune_catalog) or raise the limit.",
    )


def leasing_paused() -> str | None:
    """Why range leasing is paused (database or catalog over its limit), or None."""
    reasons = [reason for reason in (room(), catalog_full()) if reason]
    return " ".join(reasons) or None


def free_bytes(directory: Path) -> int:
    """Bytes an unprivileged writer may still put on the disk holding `directory`."""
    usage = os.statvfs(directory)
    return usage.f_bavail * usage.f_frsize


def kept_free(directory: Path) -> int:
    """Bytes an upload to `directory` must leave free on its disk.

    SNAPSHOT_KEEP_FREE_BYTES, and, when the embedded database's files lie on
    the same disk, the room DB_MAX_BYTES still leaves the database: uploads
    never take the space the database limit keeps for it. A database
    elsewhere (DATABASE_URL) is not known to share the disk; an operator whose
    does adds its room to SNAPSHOT_KEEP_FREE_BYTES (docs/security.md).
    """
    kept = int(settings.SNAPSHOT_KEEP_FREE_BYTES)
    limit = int(settings.DB_MAX_BYTES)
    if limit > 0 and _shares_disk_with_database(directory):
        kept += max(0, limit - database_size())
    return kept


def _shares_disk_with_database(directory: Path) -> bool:
    data_dir = settings.DATABASES["default"].get("EMBEDDED_DIR")
    if not settings.EMBEDDED_DATABASE or not data_dir:
        return False
    try:
        return os.stat(directory).st_dev == os.stat(data_dir).st_dev
    except OSError:  # not made yet: it will be, beside the rest of DATA_DIR
        return True
