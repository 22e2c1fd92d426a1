"""The coordinator's own news server: one process-wide connection pool, made lazily.

Planning (date search, water marks) and the overview relay borrow connections
from `news_pool()`. Nothing connects at import time: the pool is built on the
first call and connections are opened on demand. Errors and logs name the
server by its masked URL only, never with the password.
"""

from __future__ import annotations

import threading
from dataclasses import replace

from django.conf import settings

from core.errors import Unavailable
from indexer.connection_slots import DatabaseSlots
from usenet.nntp import NewsServerConfig, NNTPPool


class NewsServerNotConfigured(Unavailable):
    """NEWS_SERVER_URL is unset: there is no news server to plan from or relay."""


_lock = threading.Lock()
_pool: NNTPPool | None = None
_pool_url: str | None = None
_slots: DatabaseSlots | None = None


def news_server_config(url: str | None = None) -> NewsServerConfig:
    """The configured server; raises NewsServerNotConfigured when there is none."""
    url = settings.NEWS_SERVER_URL if url is None else url
    if not url:
        raise NewsServerNotConfigured(
            "The coordinator has no news server: set NEWS_SERVER_URL "
            "(e.g. nntps://user:pass@news.example.com:563/?connections=8)."
        )
    try:
        config = NewsServerConfig.from_url(url)
    except ValueError as exc:  # the message is already masked
        raise NewsServerNotConfigured(f"NEWS_SERVER_URL is malformed: {exc}") from None
    if not settings.NEWS_COMPRESSION:
        config = replace(config, compression=False)
    return config


def news_pool() -> NNTPPool:
    """The process-wide pool for NEWS_SERVER_URL, created on first use.

    A changed setting (tests override it) gets a fresh pool; the old one is
    closed.
    """
    global _pool, _pool_url
    url = settings.NEWS_SERVER_URL
    key = f"{url}|{settings.NEWS_COMPRESSION}"
    with _lock:
        if _pool is not None and _pool_url == key:
            return _pool
        old, _pool = _pool, None
        config = news_server_config(url)
        _pool = NNTPPool(
            config,
            acquire_timeout=settings.NEWS_POOL_WAIT_SECONDS,
            gate=_connection_slots(settings.NNTP_MAX_CONNECTIONS or config.connections),
        )
        _pool_url = key
    if old is not None:
        old.close()
    return _pool


def _connection_slots(cap: int) -> DatabaseSlots:
    """The process's slots under the global cap (made again when the cap changes)."""
    global _slots
    if _slots is None or _slots.cap != cap:
        if _slots is not None:
            _slots.close()
        _slots = DatabaseSlots(cap)
    return _slots


def close_news_pool() -> None:
    """Close the pool's idle connections and forget it, and end the session holding
    this process's connection slots (tests, shutdown)."""
    global _pool, _pool_url, _slots
    with _lock:
        old, _pool, _pool_url = _pool, None, None
        slots, _slots = _slots, None
    if old is not None:
        old.close()
    if slots is not None:
        slots.close()
