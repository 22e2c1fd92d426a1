"""Rate limits kept in PostgreSQL (the rate_bucket table), so every
coordinator host and gunicorn worker counts against the same window.

A fixed window per key: `hit` counts one call and raises `Throttled` past
the limit; `peek` reads without counting (the admin login counts only
failures). The figures and what happens beyond them: docs/security.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import Throttled
from core.sql import queries


@dataclass(frozen=True)
class Window:
    hits: int
    retry_after: int


def check_window(window: Window, limit: int, what: str) -> None:
    """Raise Throttled when `window` holds more than `limit` hits (0: no limit)."""
    if limit and window.hits > limit:
        raise Throttled(
            f"Too many {what} ({limit} per window): wait {window.retry_after} s and retry.",
            window.retry_after,
        )


def hit(key: str, limit: int, window_seconds: int, what: str) -> Window:
    """Count one call on `key`; Throttled past `limit` calls in the window."""
    row = queries.fetchone("rate_hit", {"key": key, "window": window_seconds})
    assert row is not None  # the upsert always returns its row
    counted = Window(row.hits, row.retry_after)
    check_window(counted, limit, what)
    return counted


def peek(key: str, window_seconds: int) -> Window:
    """The calls counted on `key` in its current window, without counting one."""
    row = queries.fetchone("rate_peek", {"key": key, "window": window_seconds})
    return Window(0, 0) if row is None else Window(row.hits, row.retry_after)


def check_room(key: str, limit: int, window_seconds: int, what: str) -> None:
    """Throttled when `key` already holds `limit` hits in its window (0: no limit);
    counts nothing (a caller counts only what it must, e.g. failures)."""
    check_peeked(peek(key, window_seconds), limit, window_seconds, what)


def check_peeked(counted: Window, limit: int, window_seconds: int, what: str) -> None:
    """`check_room` for a window its caller has peeked already."""
    if limit and counted.hits >= limit:
        raise Throttled(
            f"Too many {what} ({limit} per {window_seconds} s): wait {counted.retry_after} s "
            "and retry.",
            counted.retry_after,
        )


def forget(key: str) -> None:
    queries.execute("rate_forget", {"key": key})
