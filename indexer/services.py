"""Writes of the indexer app: groups taken from the news server's list, node tokens, the audit log."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from core.errors import Invalid
from core.sql import PARAMETER_BATCH, slices
from core.tokens import hash_token, new_token
from indexer.models import AuditAction, AuditEntry, Group, Node
from indexer.newsserver import news_pool
from indexer.signals import nodes_disabled
from indexer.token_cache import forget_tokens
from usenet.groups import group_name_problem
from usenet.nntp import NNTPPool


@dataclass
class AddedGroups:
    listed: int = 0
    added: list[str] = field(default_factory=list)
    # Listed names RFC 3977 does not allow (a CR, a space...): never stored.
    refused: list[str] = field(default_factory=list)
    known: int = 0
    dry_run: bool = False


def add_groups(
    wildmat: str,
    dry_run: bool = False,
    *,
    pool: NNTPPool | None = None,
    progress: Callable[[str, int], None] | None = None,
) -> AddedGroups:
    """Add the groups the news server lists for `wildmat` (LIST ACTIVE) that are not here yet.

    New groups start live indexing now (created_at), active, at the default priority.
    """
    pool = pool or news_pool()
    result = AddedGroups(dry_run=dry_run)
    names: list[str] = []
    with pool.connection() as client:
        for name, _last, _first, _flags in client.list_active(wildmat):
            if group_name_problem(name) is not None:
                result.refused.append(name)
                continue
            names.append(name)
            if progress is not None:
                progress(name, len(names))
    result.listed = len(names)
    # In slices: a server lists tens of thousands of groups.
    known: set[str] = set()
    for batch in slices(names):
        known.update(Group.objects.filter(name__in=batch).values_list("name", flat=True))
    result.known = len(known)
    result.added = sorted(set(names) - known)
    if not dry_run and result.added:
        # ignore_conflicts: a group another operator added meanwhile stays as it is.
        Group.objects.bulk_create(
            [Group(name=name) for name in result.added],
            batch_size=PARAMETER_BATCH // 4,  # four columns a row
            ignore_conflicts=True,
        )
    return result


# --- the audit log --------------------------------------------------------------

COMMAND_LINE_ACTOR = "manage.py"


def record_audit(
    actor: Any,
    action: AuditAction,
    object_type: str,
    count: int,
    detail: dict[str, Any] | None = None,
) -> AuditEntry:
    """Log an operator action. The one writer of AuditEntry, called by the services acted through.

    `actor` is the Django user who acted (the admin passes request.user), or
    None for the command line.
    """
    user = (
        actor if getattr(actor, "is_authenticated", False) and getattr(actor, "pk", None) else None
    )
    name = (
        user.get_username() if user is not None else (str(actor) if actor else COMMAND_LINE_ACTOR)
    )
    return AuditEntry.objects.create(
        user=user,
        actor=name[:150],
        action=action,
        object_type=object_type,
        count=count,
        detail=detail or {},
    )


# Ids named in an audit entry's detail, at most.
AUDIT_IDS_SHOWN = 100


# --- tokens -----------------------------------------------------------------


def issue_token(name: str, *, actor: Any = None) -> tuple[Node, str, bool]:
    """Issue a token for `name`: a new node, or a rotation that re-enables it.

    Returns (node, token, created). The token is shown once and only its
    SHA-256 digest is kept; the old token stops working at once in this
    process, and within TOKEN_CACHE_SECONDS in the others (the token cache,
    indexer/token_cache.py). The audit entry names the node, never the token.
    """
    name = name.strip()
    if not name or len(name) > 100:
        raise Invalid("name: a node name is 1 to 100 characters.")
    token = new_token()
    node, created = Node.objects.update_or_create(
        name=name, defaults={"token_hash": hash_token(token), "disabled": False}
    )
    action = AuditAction.TOKEN_ISSUED if created else AuditAction.TOKEN_ROTATED
    record_audit(actor, action, "node", 1, {"node": node.name, "node_id": node.pk})
    if not created:
        forget_tokens()
    return node, token, created


def set_nodes_disabled(node_ids: Iterable[int], disabled: bool, *, actor: Any = None) -> int:
    """Disable or enable nodes. Disabled nodes lose their leases at once (the
    apps above listen to `nodes_disabled`) and their tokens stop at once in this
    process, within TOKEN_CACHE_SECONDS in the others (indexer/token_cache.py);
    the audit entry says how many."""
    ids = list(node_ids)
    detail: dict[str, Any] = {"ids": ids[:AUDIT_IDS_SHOWN]}
    with transaction.atomic():
        count = Node.objects.filter(id__in=ids).exclude(disabled=disabled).update(disabled=disabled)
        if disabled:
            forget_tokens()
            for _receiver, ended in nodes_disabled.send(None, node_ids=ids):
                detail.update(dict(ended) if isinstance(ended, dict) else {})
        action = AuditAction.NODES_DISABLED if disabled else AuditAction.NODES_ENABLED
        record_audit(actor, action, "node", count, detail)
    return count
