"""Writes of the indexer app: groups taken from the news server's list."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from indexer.models import Group
from indexer.newsserver import news_pool
from indexer.nntp import NNTPPool


@dataclass
class AddedGroups:
    listed: int = 0
    added: list[str] = field(default_factory=list)
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
            names.append(name)
            if progress is not None:
                progress(name, len(names))
    result.listed = len(names)
    known = set(Group.objects.filter(name__in=names).values_list("name", flat=True))
    result.known = len(known)
    result.added = sorted(set(names) - known)
    if not dry_run and result.added:
        created = Group.objects.bulk_create(
            [Group(name=name) for name in result.added], ignore_conflicts=True
        )
        result.added = sorted(group.name for group in created)
    return result
