"""How long the request this thread serves waited for a thread (gunicorn's queue).

`core.gunicorn_worker.QueueTimedWorker` stamps a connection when it queues
it for the thread pool and records the wait here when a thread takes it;
`core.api.middleware.QueueWaitMiddleware` answers 503 to an API call that
waited longer than API_QUEUE_MAX_SECONDS. Under another server nothing is
recorded and nothing is refused. Why: docs/performance.md, "Fleet simulator".
"""

from __future__ import annotations

import threading

_local = threading.local()


def record(seconds: float | None) -> None:
    _local.waited = seconds


def waited() -> float | None:
    """Seconds the current request waited in the queue, or None when unknown."""
    return getattr(_local, "waited", None)
