"""Enabled nodes' token rows, kept per process for TOKEN_CACHE_SECONDS.

Authentication (indexer/authentication.py) looks a token up by its SHA-256
digest; an enabled node's row is kept here under that digest, and compared
again in constant time on every request, so most calls make no query for it
(a ping costs 0.81x the coordinator's CPU with the cache, a heartbeat 0.84x:
docs/performance.md, "The coordinator's cost per call").

The bound: a token disabled or rotated by another process (another worker,
another host) stops at most TOKEN_CACHE_SECONDS later; in this process at
once, since the services that disable and rotate (indexer/services.py) call
forget_tokens(). Unknown and disabled tokens are never kept: a new token works
at once, and guessed ones cannot fill memory.
"""

from __future__ import annotations

import threading
import time
from typing import Any, NamedTuple

from django.conf import settings
from django.db import transaction

MAX_ENTRIES = 10_000  # past this many nodes the cache starts over (one query each)


class CachedNode(NamedTuple):
    id: int
    name: str
    token_hash: str
    expires: float  # time.monotonic()


_cache: dict[str, CachedNode] = {}
_lock = threading.Lock()


def forget_tokens() -> None:
    """Empty this process's cache (a node was disabled or its token rotated), now
    and again when the change commits: until then another thread's request reads
    the node as it was and may keep its row."""
    _clear()
    transaction.on_commit(_clear)


def _clear() -> None:
    with _lock:
        _cache.clear()


def cached_node(digest: str) -> CachedNode | None:
    """The row kept for `digest` if it has not expired."""
    entry = _cache.get(digest)
    if entry is None or entry.expires <= time.monotonic():
        return None
    return entry


def keep_node(digest: str, row: Any) -> None:
    """Keep an enabled node's row (id, name, token_hash) for TOKEN_CACHE_SECONDS."""
    seconds = settings.TOKEN_CACHE_SECONDS
    if seconds <= 0:
        return
    with _lock:
        if len(_cache) >= MAX_ENTRIES:
            _cache.clear()
        _cache[digest] = CachedNode(row.id, row.name, row.token_hash, time.monotonic() + seconds)
