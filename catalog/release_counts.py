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


def recount_batch(
    summary: RecountSummary, *, after: int, limit: int, uncounted_only: bool = False
) -> int:
    """Count the next `limit` releases past id `after` again, adding to `summary`.

    One transaction: the releases are locked in id order in one statement and
    counted in a second, so a batch that committed while the lock waited is
    counted too. `uncounted_only`: only those not counted since the upgrade
    (migration 0005's partial index). Answers the last id counted, 0 when
    none was left.
    """
    with transaction.atomic():
        locked = queries.fetchall(
            "lock_uncounted_releases" if uncounted_only else "lock_releases_to_recount",
            {"after": after, "limit": limit},
        )
        ids = [r.id for r in locked]
        if not ids:
            return 0
        counted = queries.fetchone(
            "recount_releases", {"ids": ids, "floor": int(settings.RELEASE_MIN_COMPLETION)}
        )
    summary.releases += len(ids)
    if counted is not None:
        summary.changed += int(counted.changed)
        summary.listed += int(counted.listed)
        summary.unlisted += int(counted.unlisted)
    return int(ids[-1])


def recount_releases(
    batch_size: int = 1000,
    progress: Callable[[RecountSummary], None] | None = None,
    *,
    after: int = 0,
) -> RecountSummary:
    """Count every release (id above `after`) again from its files; write only what changed.

    Keyset by id, one transaction per batch (`recount_batch`). A run can
    stop anywhere: what it wrote is right, and a second run changes nothing.
    """
    row = queries.fetchone("count_releases", {})
    summary = RecountSummary(total=int(row.releases) if row else 0)
    while after := recount_batch(summary, after=after, limit=batch_size):
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


__all__ = ["RecountSummary", "recount_batch", "recount_releases", "settle_releases"]
