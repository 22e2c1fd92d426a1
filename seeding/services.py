"""Writes of the range-lease protocol: tokens, leases, batches, operator actions.

Every lease statement lives in `sql/ranges.sql`; the functions here are the
only callers. What every leased work table shares (the gate, the pause,
fencing, a release's attempts, the quiet-lease sweep) is `leasing.py`;
`RANGES` names the range statements it runs. A fenced statement that matches
no row is explained by `_lease_lost`, which reads the range once to say why
(unknown range: 404; another node's, a stale epoch or not leased: 409).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction

from catalog.rulesets import current_rules
from catalog.services import store_files
from catalog.validation import FileReport
from core.crashpoints import crash_point
from core.metrics import BATCHES, HEADERS, LEASE_SECONDS, LEASES
from core.sql import Record
from indexer.models import AuditAction, Group
from indexer.services import AUDIT_IDS_SHOWN, record_audit

from .leasing import Offer
from .models import SeedRange
from .ranges import RANGES
from .signals import range_finished
from .sql import queries


@dataclass(frozen=True)
class RangeLease:
    id: int
    group: str
    start: int
    end: int
    epoch: int
    group_id: int


LeaseOffer = Offer[RangeLease]


# --- the lease protocol -----------------------------------------------------


def current_rule_version() -> int:
    """The rule version ranges are stamped with (the catalog's rule sets)."""
    return current_rules().version


def lease_range(node_id: int) -> LeaseOffer:
    with LEASE_SECONDS.time():
        offer = _lease_range(node_id)
    if offer.lease is not None:
        LEASES.labels(kind="range").inc()
    return offer


def _lease_range(node_id: int) -> LeaseOffer:
    """Hand one range to a node, or say why nothing is handed out.

    Quiet leases are taken back by the periodic upkeep (seeding/maintenance.py),
    which this path also runs when its per-process interval is due (every
    RETIRE_INTERVAL_SECONDS; so a deployment without `manage.py maintain`
    still works), and whenever the claim finds nothing; never inside each
    claim: that keeps a scan of the leased ranges off the hot path
    (docs/performance.md). A quiet lease thus passes to another node at
    most that much after its TTL.
    """
    params = {
        "node_id": node_id,
        "ttl": settings.LEASE_TTL_SECONDS,
        "max_attempts": settings.MAX_ATTEMPTS,
        "urgent_below": settings.DEFAULT_PRIORITY,
        "rule_version": current_rule_version(),
    }
    return RANGES.lease(node_id, params, _range_lease)


def _range_lease(row: Record) -> RangeLease:
    return RangeLease(row.id, row.group, row.start, row.end, row.epoch, row.group_id)


def admit_lease(node_id: int, lanes_held: int = 0) -> None:
    """Count a lease call against the node's rate (Throttled beyond
    LEASE_RATE_PER_MINUTE) and refuse it (TooManyLeases) when the node already
    holds LEASE_MAX_PER_NODE live leases: its leased ranges plus `lanes_held`.
    (The range lease runs the same gate inside its claim: gated_lease_range.)"""
    RANGES.admit(node_id, also_held=lanes_held)


def end_node_leases(node_ids: Sequence[int], **_signal: Any) -> dict[str, int]:
    """Disabled nodes lose their range leases at once (indexer's `nodes_disabled`)."""
    return {"ranges_ended": RANGES.end_node_leases(node_ids)}


def range_holder(range_id: int) -> Record | None:
    """A range's status, node_id, epoch, start_id and end_id, or None."""
    return RANGES.holder_of(range_id)


def _lease_lost(node_id: int, range_id: int, epoch: int, row: Record | None = None) -> Exception:
    """Why a fenced statement matched nothing; `row` is range_holder's, if already read."""
    return RANGES.lease_lost(node_id, range_id, epoch, row)


@dataclass(frozen=True)
class BatchResult:
    """What a batch did: the resume point now, the files stored, and whether it moved."""

    next: int
    stored: int
    advanced: bool


def report_batch(
    node_id: int,
    range_id: int,
    epoch: int,
    next_id: int,
    headers: int,
    files: Sequence[FileReport],
    fragments: Sequence[FileReport],
) -> BatchResult:
    """Record a batch: resume point, heartbeat, counters and the files, all or nothing."""
    with transaction.atomic():
        row = queries.fetchone(
            "report_batch",
            {
                "range_id": range_id,
                "node_id": node_id,
                "epoch": epoch,
                "next": next_id,
                "headers": headers,
                "files": len(files),
                "fragments": len(fragments),
            },
        )
        if row is None:
            raise _lease_lost(node_id, range_id, epoch)
        stored = store_files(row.group_id, range_id, files, fragments, row.group_name)
        crash_point("batch.in_transaction")
    crash_point("batch.after_commit")
    BATCHES.inc()
    if row.advanced:
        HEADERS.inc(headers)
    return BatchResult(next=row.next_id, stored=stored, advanced=row.advanced)


def heartbeat_range(node_id: int, range_id: int, epoch: int) -> None:
    RANGES.keep_alive(node_id, range_id, epoch)


def finish_range(node_id: int, range_id: int, epoch: int) -> None:
    params = {"range_id": range_id, "node_id": node_id, "epoch": epoch}
    with transaction.atomic():
        row = queries.fetchone("finish_range", params)
        if row is None:
            raise _lease_lost(node_id, range_id, epoch)
        crash_point("finish.in_transaction")
        # The lane that handed the range out counts it (leases listens).
        range_finished.send(None, range_id=range_id, group_id=row.group_id, headers=row.headers)


def release_range(
    node_id: int, range_id: int, epoch: int, error: str | None = None, uncounted: bool = False
) -> str:
    """Give a range back: queued again, or failed once its attempts are used up (or done,
    when it was read to its end)."""
    return RANGES.give_back(node_id, range_id, epoch, error, uncounted)


# --- operators and tests ----------------------------------------------------


def create_ranges(
    group: Group,
    spans: Iterable[tuple[int, int]],
    priority: int | None = None,
    capture: bool = False,
) -> int:
    """Insert queued ranges (start, end) for a group in one multi-row statement."""
    prio = settings.DEFAULT_PRIORITY if priority is None else priority
    rows = [
        SeedRange(group=group, start_id=s, end_id=e, next_id=s, priority=prio, capture=capture)
        for s, e in spans
    ]
    SeedRange.objects.bulk_create(rows, batch_size=5000)
    return len(rows)


def requeue_ranges(range_ids: Iterable[int], from_start: bool = False, *, actor: Any = None) -> int:
    """Queue ranges again (failed, done or stuck), optionally from their first article."""
    ids = list(range_ids)
    count = queries.execute("requeue_ranges", {"ids": ids, "from_start": from_start})
    detail = {"ids": ids[:AUDIT_IDS_SHOWN], "from_start": from_start}
    record_audit(actor, AuditAction.REQUEUED, "seed range", count, detail)
    return count


def fail_ranges(
    range_ids: Iterable[int], reason: str = "marked failed by an operator", *, actor: Any = None
) -> int:
    ids = list(range_ids)
    count = queries.execute("fail_ranges", {"ids": ids, "reason": reason})
    detail = {"ids": ids[:AUDIT_IDS_SHOWN], "reason": reason}
    record_audit(actor, AuditAction.FAILED, "seed range", count, detail)
    return count


def reprioritize_ranges(range_ids: Iterable[int], priority: int, *, actor: Any = None) -> int:
    ids = list(range_ids)
    count = queries.execute("reprioritize_ranges", {"ids": ids, "priority": priority})
    detail = {"ids": ids[:AUDIT_IDS_SHOWN], "priority": priority}
    record_audit(actor, AuditAction.REPRIORITIZED, "seed range", count, detail)
    return count
