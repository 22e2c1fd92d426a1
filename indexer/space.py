"""Space limits: leasing pauses before the database fills its disk.

`room()` answers with the reason leasing is paused, or None. The size is
measured with pg_database_size() at most every SPACE_CHECK_CACHE_SECONDS per
process, so the lease path stays cheap.
"""

from __future__ import annotations

import threading
import time

from django.conf import settings
from django.db import connection

_lock = threading.Lock()
_cached: dict[str, tuple[float, int]] = {}


def _cached_size(key: str, sql: str) -> int:
    now = time.monotonic()
    with _lock:
        hit = _cached.get(key)
        if hit is not None and now - hit[0] < settings.SPACE_CHECK_CACHE_SECONDS:
            return hit[1]
    with connection.cursor() as cursor:
        cursor.execute(sql)
        row = cursor.fetchone()
    size = int(row[0]) if row and row[0] is not None else 0
    with _lock:
        _cached[key] = (now, size)
    return size


def database_size() -> int:
    return _cached_size("database", "SELECT pg_database_size(current_database())")


def forget_cached_sizes() -> None:
    """Drop cached measurements (tests and operators changing limits)."""
    with _lock:
        _cached.clear()


def room() -> str | None:
    """Why range leases are paused for lack of space, or None when there is room."""
    limit = settings.DB_MAX_BYTES
    if limit <= 0:
        return None
    size = database_size()
    if size > limit:
        return (
            f"The database holds {size / 2**30:.1f} GiB, over DB_MAX_BYTES "
            f"({limit / 2**30:.1f} GiB): prune the catalog or raise the limit."
        )
    return None


def catalog_full() -> str | None:
    """Why the catalog is full (history lanes pause), or None.

    Placeholder until the catalog tables exist: they are measured against
    CATALOG_MAX_BYTES there.
    """
    return None
