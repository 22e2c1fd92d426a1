"""Run calls in threads that start together, for the concurrency tests.

Each call gets a thread (so a database connection) of its own; all wait at a
barrier and start at once. Errors raised in a thread fail the test, and the
joins are bounded: a deadlock fails the test instead of hanging the suite.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from django.db import connections

T = TypeVar("T")


def run_threads(calls: Sequence[Callable[[], T]], *, timeout: float = 120) -> list[T]:
    """Run each call in its own thread, all at once; return their results in order."""
    barrier = threading.Barrier(len(calls))
    results: dict[int, T] = {}
    errors: list[BaseException] = []

    def work(index: int) -> None:
        try:
            barrier.wait(timeout)
            results[index] = calls[index]()
        except BaseException as exc:  # reported below, not swallowed
            errors.append(exc)
        finally:
            connections.close_all()  # a thread's connections are its own to close

    # Daemon threads: one stuck in a deadlock must not keep pytest from exiting.
    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    stuck = [thread.name for thread in threads if thread.is_alive()]
    assert not stuck, f"threads still running after {timeout:g} s: {stuck}"
    assert not errors, errors
    return [results[index] for index in range(len(calls))]
