"""Writes of the inspection-lease protocol (docs/api.md, "Inspection leases").

The lease machinery is the ranges' (seeding/leasing.py): `INSPECTIONS` names
this table's statements (sql/inspections.sql). A report is checked and
applied by the catalog (`catalog.inspection`) in one transaction with the
lease's end, so an acknowledged report is never lost and a fenced one changes
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction

from catalog.inspection import Applied, apply_inspection, validate_report
from core.errors import Invalid
from core.metrics import LEASE_SECONDS, LEASES
from core.sql import Record
from indexer.models import AuditAction
from indexer.services import AUDIT_IDS_SHOWN, record_audit
from seeding.leasing import Offer, WorkTable

from . import planning
from .sql import queries

INSPECTIONS = WorkTable(
    noun="inspection",
    queries=queries,
    id_param="inspection_id",
    cap_setting="INSPECT_LEASES_PER_NODE",
    gate="inspection_gate",
    gated_claim="lease_inspection",
    claim="claim_inspection",
    sweep_task="retire_quiet_inspections",
    holder="inspection_holder",
    heartbeat="heartbeat_inspection",
    release="release_inspection",
    retire="retire_quiet_inspections",
    end_node="end_node_inspections",
    takes_turns=True,  # a call hands out up to 16 (count): one node's calls take turns
)


@dataclass(frozen=True)
class InspectionLease:
    id: int
    epoch: int
    release: int
    group: str
    articles: list[dict[str, Any]]


InspectionOffer = Offer[InspectionLease]


def lease_inspection(node_id: int, count: int = 1) -> InspectionOffer:
    with LEASE_SECONDS.time():
        offer = _lease_inspection(node_id, count)
    if offer.lease is not None:
        LEASES.labels(kind="inspection").inc(1 + len(offer.more))
    return offer


def _lease_inspection(node_id: int, count: int) -> InspectionOffer:
    """Hand up to `count` inspections to a node (newest first, in one claim statement,
    no more than its cap leaves it), or say why nothing is handed out: the flow every
    leased table shares (seeding.leasing.WorkTable.lease), so a call is counted once
    against the node's lease-call rate and quiet leases are swept as the ranges' are."""
    return INSPECTIONS.lease(node_id, {"node_id": node_id}, _inspection_lease, count)


def _inspection_lease(row: Record) -> InspectionLease:
    return InspectionLease(row.id, row.epoch, row.release_id, row.group, _json(row.articles))


def _json(value: Any) -> Any:
    """A jsonb column as raw SQL returns it under Django (text), decoded."""
    return json.loads(value) if isinstance(value, str) else value


def heartbeat_inspection(node_id: int, inspection_id: int, epoch: int) -> None:
    INSPECTIONS.keep_alive(node_id, inspection_id, epoch)


def release_inspection(
    node_id: int, inspection_id: int, epoch: int, error: str | None = None, uncounted: bool = False
) -> str:
    """Give an inspection back: queued again, or failed once its attempts are used up."""
    return INSPECTIONS.give_back(node_id, inspection_id, epoch, error, uncounted)


def report_inspection(
    node_id: int, inspection_id: int, epoch: int, payload: dict[str, Any]
) -> Applied:
    """Check a node's results, apply them to the release and end the lease done.

    The fence comes first: a report on a lease this node no longer holds is a
    409 lease_lost whatever it carries, so the node drops it rather than
    "fixing" a report nobody will apply.
    """
    with transaction.atomic():
        fenced = INSPECTIONS.fenced(node_id, inspection_id, epoch)
        row = queries.fetchone("lock_inspection", fenced)
        if row is None:
            raise INSPECTIONS.lease_lost(node_id, inspection_id, epoch)
        report = validate_report(payload)
        _check_named(payload, _json(row.articles))
        applied = apply_inspection(row.release_id, report)
        outcome = json.dumps(asdict(applied))
        queries.execute("finish_inspection", {**fenced, "outcome": outcome})
    return applied


def _check_named(payload: dict[str, Any], articles: Sequence[dict[str, Any]]) -> None:
    """Results only for roles the lease named; missing only its message-ids."""
    roles = {article["role"] for article in articles}
    ids = {mid for article in articles for mid in article["message_ids"]}
    for result in payload.get("results") or []:
        role = result.get("role") if isinstance(result, dict) else None
        if role not in roles:
            raise Invalid(
                f"results names role {role!r}, which this lease did not ask for "
                f"(it named {', '.join(sorted(roles))})."
            )
    for item in payload.get("missing") or []:
        message_id = item.get("message_id") if isinstance(item, dict) else None
        if message_id not in ids:
            raise Invalid(f"missing names {message_id!r}, which is not an article of this lease.")


def end_node_inspections(node_ids: Sequence[int], **_signal: Any) -> dict[str, int]:
    """Disabled nodes lose their inspection leases at once (indexer's `nodes_disabled`)."""
    return {"inspections_ended": INSPECTIONS.end_node_leases(node_ids)}


# --- operators --------------------------------------------------------------


def requeue_inspections(ids: Iterable[int], *, actor: Any = None) -> int:
    """Queue inspections again (failed, done or stuck), their attempts reset."""
    wanted = list(ids)
    count = queries.execute("requeue_inspections", {"ids": wanted})
    record_audit(
        actor, AuditAction.REQUEUED, "inspection", count, {"ids": wanted[:AUDIT_IDS_SHOWN]}
    )
    return count


def reinspect_releases(release_ids: Sequence[int], actor: str) -> int:
    """catalog.inspection's requeue hook (the admin's "inspect again", `manage.py
    reinspect`): each release's row queued again with its attempts reset and its
    articles read again, or planned now whatever INSPECT_RELEASES says; how many."""
    ids = list(release_ids)
    with transaction.atomic():
        queries.execute("requeue_releases", {"ids": ids})
        planned = planning.plan_releases(ids)
    detail = {"releases": ids[:AUDIT_IDS_SHOWN]}
    record_audit(actor, AuditAction.REQUEUED, "inspection", planned, detail)
    return planned


def fail_inspections(
    ids: Iterable[int], reason: str = "marked failed by an operator", *, actor: Any = None
) -> int:
    wanted = list(ids)
    count = queries.execute("fail_inspections", {"ids": wanted, "reason": reason})
    detail = {"ids": wanted[:AUDIT_IDS_SHOWN], "reason": reason}
    record_audit(actor, AuditAction.FAILED, "inspection", count, detail)
    return count
