"""gunicorn's gthread worker, timing each request's wait for a thread (indexer/queue_wait.py).

`manage.py serve` runs it (`--worker-class indexer.gunicorn_worker.QueueTimedWorker`).
"""

from __future__ import annotations

import time
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

from indexer import queue_wait


class QueueTimedWorker(ThreadWorker):
    def enqueue_req(self, conn: Any) -> None:
        conn.queued_at = time.monotonic()
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:
        queued_at = getattr(conn, "queued_at", None)
        queue_wait.record(None if queued_at is None else time.monotonic() - queued_at)
        try:
            return super().handle(conn)
        finally:
            queue_wait.record(None)
