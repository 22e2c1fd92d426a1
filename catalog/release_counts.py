"""Releases' totals counted again from their files, and quiet releases listed.

`recount_releases` (`manage.py recount_releases`) counts stored releases
again the way the triggers now keep them: each file name of a release once,
as its fullest copy, however many groups hold it (a release cross-posted
before this counted its files once per group). `settle_releases` is the
upkeep's task: it lists the releases no batch has added to for
RELEASE_SETTLE_MINUTES that reach RELEASE_MIN_COMPLETION (docs/catalog.md,
"Listed releases").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from .sql import queries

SETTLE_BATCH = 1000
# One upkeep run settles at most this many batches; the rest waits for the next.
SETTLE_ROUNDS = 20


@dataclass
class RecountSummary:
    releases: int = 0  # read
    total: int = 0  # in the catalog when the run began
    changed: int = 0  # whose row was written
    listed: int = 0  # newly listed
    unlisted: int = 0  # listed only on a wrong count before


def recount_releases(
    batch_size: int = 1000,
    progress: Callable[[RecountSummary], None] | None = None,
    *,
    after: int = 0,
) -> RecountSummary:
    """Count every release (id above `after`) again from its files; write only what changed.

    Keyset by id, one transaction per batch: the batch's releases are locked
    in one statement and counted in a second, so a batch that committed while
    the lock waited is counted too. A run can stop anywhere: what it wrote is
    right, and a second run changes nothing.
    """
    row = queries.fetchone("count_releases", {})
    summary = RecountSummary(total=int(row.releases) if row else 0)
    floor = int(settings.RELEASE_MIN_COMPLETION)
    while True:
        with transaction.atomic():
            locked = queries.fetchall(
                "lock_releases_to_recount", {"after": after, "limit": batch_size}
            )
            ids = [r.id for r in locked]
            if not ids:
                break
            counted = queries.fetchone("recount_releases", {"ids": ids, "floor": floor})
        summary.releases += len(ids)
        if counted is not None:
            summary.changed += int(counted.changed)
            summary.listed += int(counted.listed)
            summary.unlisted += int(counted.unlisted)
        after = ids[-1]
        if progress is not None:
            progress(summary)
    return summary


def settle_releases() -> int:
    """List the queued releases quiet for RELEASE_SETTLE_MINUTES at the completion floor.

    Statements of SETTLE_BATCH queue rows each (read by the queue's index on
    `touched_at`), at most SETTLE_ROUNDS of them a run; answers how many
    releases it listed.
    """
    params = {
        "settle_minutes": int(settings.RELEASE_SETTLE_MINUTES),
        "floor": int(settings.RELEASE_MIN_COMPLETION),
        "limit": SETTLE_BATCH,
    }
    listed = 0
    for _ in range(SETTLE_ROUNDS):
        row = queries.fetchone("settle_releases", params)
        if row is None:
            break
        listed += int(row.listed)
        # Fewer than a batch due, or only rows whose release a batch holds.
        if row.taken < SETTLE_BATCH or row.dropped == 0:
            break
    return listed


__all__ = ["RecountSummary", "recount_releases", "settle_releases"]
