"""Periodic upkeep, in one place: quiet range leases, the throughput rollup, and
what higher apps register (`register`, from their AppConfig.ready).

It runs from `manage.py maintain` and, when due, from the range-lease path, so
a deployment with no extra process still works (docs/console.md, "Periodic upkeep").
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from catalog.release_backfill import backfill_releases
from catalog.release_counts import settle_releases

from .ranges import RANGES
from .sql import queries

logger = logging.getLogger(__name__)

# Per-process intervals of the opportunistic runs from the lease path.
RETIRE_INTERVAL_SECONDS = 10.0  # a quiet lease passes on at most this long after its TTL
FOLD_INTERVAL_SECONDS = 300.0  # an hour is foldable five minutes after it ends
PRUNE_INTERVAL_SECONDS = 3600.0  # minutes are kept for hours; once an hour is plenty
SETTLE_INTERVAL_SECONDS = 60.0  # a quiet release is listed within a minute of settling
# After an upgrade, RELEASE_BACKFILL_BATCH releases read and counted again a run of
# `maintain` (2,000 of each: 0.75-1.27 s measured, docs/performance.md), and
# BACKFILL_LEASE_STEP a run from the lease path, whose node waits for it (a
# twentieth of that time); once done, a run reads two position rows.
BACKFILL_INTERVAL_SECONDS = 10.0
BACKFILL_LEASE_STEP = 100


@dataclass
class Task:
    name: str
    label: str  # what the count counts, for summaries: "quiet range leases retired"
    run: Callable[[], int]
    every: float  # seconds between opportunistic runs in one process
    # What the lease path runs instead of `run`, where a whole run would hold up the
    # node's call (a smaller step of the same work); None: `run`.
    lease_step: Callable[[], int] | None = None
    last_run: float = float("-inf")  # time.monotonic() of this process's last run


@dataclass(frozen=True)
class Outcome:
    task: Task
    count: int = 0
    error: str | None = None


_tasks: dict[str, Task] = {}
_lock = threading.Lock()  # one thread of a process runs the due tasks; others go on
_next_due = float("-inf")


def register(
    name: str,
    label: str,
    run: Callable[[], int],
    *,
    every: float,
    lease_step: Callable[[], int] | None = None,
) -> Task:
    """Add (or replace, by name) a periodic task; returns it. `lease_step`: a smaller
    step of the same work for the lease path, where a node's call waits for it."""
    task = Task(name, label, run, every, lease_step)
    _tasks[name] = task
    _reschedule()
    return task


def task_named(name: str) -> Task:
    """The registered task of that name (KeyError: none is)."""
    return _tasks[name]


def tasks() -> list[Task]:
    """Every registered task, in registration order (seeding's first)."""
    return list(_tasks.values())


def _reschedule() -> None:
    global _next_due
    _next_due = min((t.last_run + t.every for t in _tasks.values()), default=float("inf"))


def run_task(task: Task, *, lease_path: bool = False) -> int:
    """Run one task now (on the lease path: its lease step, where it has one) and restart
    its per-process interval."""
    task.last_run = time.monotonic()
    _reschedule()
    if lease_path and task.lease_step is not None:
        return task.lease_step()
    return task.run()


def _attempt(task: Task, *, lease_path: bool = False) -> Outcome:
    try:
        return Outcome(task, run_task(task, lease_path=lease_path))
    except Exception as exc:  # one failing sweep must not stop the others
        logger.exception("maintenance task %s failed", task.name)
        return Outcome(task, error=f"{type(exc).__name__}: {exc}")


def run_all() -> list[Outcome]:
    """Every task once (`manage.py maintain`); a failure is reported, not raised."""
    with _lock:
        return [_attempt(task) for task in tasks()]


def run_due() -> list[Outcome]:
    """The tasks whose per-process interval has passed (the lease path calls this)."""
    if time.monotonic() < _next_due or not _lock.acquire(blocking=False):
        return []
    try:
        now = time.monotonic()
        return [
            _attempt(task, lease_path=True) for task in tasks() if now - task.last_run >= task.every
        ]
    finally:
        _lock.release()


def forget_last_runs() -> None:
    """Make every task due again in this process (tests: as if its interval had passed)."""
    for task in _tasks.values():
        task.last_run = float("-inf")
    _reschedule()


def mark_all_run() -> None:
    """Count every task as just run in this process (tests: nothing is due)."""
    now = time.monotonic()
    for task in _tasks.values():
        task.last_run = now
    _reschedule()


# --- the seeding app's tasks -----------------------------------------------------


def retire_quiet_ranges() -> int:
    """Take quiet leases back: done if fully reported, failed if out of attempts, else queued."""
    return RANGES.retire_quiet()


def fold_node_totals() -> int:
    """Add the rollup's minutes up to ten minutes ago to each node's all-time headers."""
    queries.execute("ensure_header_fold", {})
    row = queries.fetchone("fold_node_totals", {})
    return int(row.folded) if row else 0


def fold_rollup_hours() -> int:
    """Fold the last day's completed hours of header_rollup into header_rollup_hour.

    Each hour is aggregated once (five minutes after it ends), so the hourly
    chart reads folded rows for those and sums only the others live.
    """
    return queries.execute("fold_rollup_hours", {})


def prune_rollup_minutes() -> int:
    """Drop per-minute rollup rows older than ROLLUP_MINUTES_KEEP_HOURS (hours stay folded)."""
    return queries.execute(
        "prune_rollup_minutes", {"keep_hours": settings.ROLLUP_MINUTES_KEEP_HOURS}
    )


RETIRE = register(
    RANGES.sweep_task,
    "quiet range leases retired",
    retire_quiet_ranges,
    every=RETIRE_INTERVAL_SECONDS,
)
FOLD = register(
    "fold_rollup_hours", "rollup hours folded", fold_rollup_hours, every=FOLD_INTERVAL_SECONDS
)
NODE_TOTALS = register(
    "fold_node_totals",
    "rollup minutes folded into node totals",
    fold_node_totals,
    every=FOLD_INTERVAL_SECONDS,
)
# After the folds in each round, so no minute is dropped before it is folded.
PRUNE = register(
    "prune_rollup_minutes",
    "rollup minutes pruned",
    prune_rollup_minutes,
    every=PRUNE_INTERVAL_SECONDS,
)
# The catalog's: releases quiet for RELEASE_SETTLE_MINUTES are listed.
SETTLE = register(
    "settle_releases",
    "releases listed after settling",
    settle_releases,
    every=SETTLE_INTERVAL_SECONDS,
)
# The catalog's catch-up after an upgrade: stored releases read and counted again.
BACKFILL = register(
    "backfill_releases",
    "releases read or counted again after an upgrade",
    backfill_releases,
    every=BACKFILL_INTERVAL_SECONDS,
    lease_step=lambda: backfill_releases(BACKFILL_LEASE_STEP),  # read at call time
)
