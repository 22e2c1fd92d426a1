"""Planning: cut each group's history, and later its tail, into seed ranges.

The news server is asked first, outside any transaction; then one transaction
takes an advisory lock, reads the coverage and inserts with COPY, so two
planners never insert overlapping ranges (docs/planning.md).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypedDict, Unpack

from django.conf import settings
from django.db import transaction

from core.errors import Invalid, NotFound
from core.sql import slices
from indexer.models import AuditAction, Group
from indexer.newsserver import news_pool
from indexer.services import record_audit
from usenet.groups import group_name_problem
from usenet.nntp import NNTPClient, NNTPPool, NoArticles, NoSuchGroup, find_article_at_date
from usenet.nntp.client import GroupInfo
from usenet.overview import parse_date

from .models import RangeStatus
from .sql import queries

log = logging.getLogger(__name__)

Span = tuple[int, int]
Progress = Callable[["GroupPlan", int, int], None]
# Fills in one group's plan from the news server.
Probe = Callable[[NNTPClient, Group, "GroupPlan"], None]


# --- pure planning ----------------------------------------------------------


def uncovered(existing: Iterable[Span], low: int, high: int) -> list[Span]:
    """The stretches of low..high that no existing span covers, newest first."""
    if low > high:
        return []
    gaps: list[Span] = []
    position = low
    for start, end in sorted(existing):
        if end < position:
            continue
        if start > high:
            break
        if start > position:
            gaps.append((position, start - 1))
        position = end + 1
        if position > high:
            break
    if position <= high:
        gaps.append((position, high))
    gaps.reverse()
    return gaps


def cut(gaps: Iterable[Span], size: int) -> list[Span]:
    """Ranges of at most `size` articles covering the gaps, newest first."""
    if size < 1:
        raise ValueError("size must be at least 1")
    ranges: list[Span] = []
    for start, end in sorted(gaps, reverse=True):
        high = end
        while high >= start:
            low = max(start, high - size + 1)
            ranges.append((low, high))
            high = low - 1
    return ranges


def interleave(per_group: Sequence[Sequence[Span]]) -> Iterator[tuple[int, Span]]:
    """(group index, range) round robin: each group's first range, then each one's second..."""
    longest = max((len(ranges) for ranges in per_group), default=0)
    for position in range(longest):
        for index, ranges in enumerate(per_group):
            if position < len(ranges):
                yield index, ranges[position]


# --- summaries --------------------------------------------------------------


@dataclass
class GroupPlan:
    """What a plan did (or, dry, would do) for one group."""

    group: str
    group_id: int
    low: int | None = None  # the plan's bottom ("from")
    high: int | None = None  # the plan's top ("to")
    ranges: int = 0
    gaps: int = 0
    articles: int = 0
    note: str = ""


@dataclass
class PlanSummary:
    groups: list[GroupPlan] = field(default_factory=list)
    dry_run: bool = False
    priority: int = 0
    size: int = 0

    @property
    def ranges(self) -> int:
        return sum(plan.ranges for plan in self.groups)

    @property
    def articles(self) -> int:
        return sum(plan.articles for plan in self.groups)


class UnknownGroups(NotFound):
    """Names that are not in the Group table; nothing was planned."""


# --- the news server's side -------------------------------------------------


def first_at_or_after(client: NNTPClient, info: GroupInfo, when: int) -> int:
    """The first article posted at or after Unix time `when`; info.last + 1 when none is.

    The date search answers the last article when every article is older;
    one more probe tells that apart from a last article that is newer.
    """
    article = find_article_at_date(client, info.name, when).article
    if article < info.last:
        return article
    try:
        lines = list(client.over(article, article))
    except NoArticles:
        return article + 1  # a hole at the high-water mark: nothing newer was found
    for line in lines:
        fields = line.split(b"\t", 4)
        if len(fields) >= 4 and fields[0] == str(article).encode():
            posted = parse_date(fields[3].decode("latin-1"))
            if posted is not None and posted >= when:
                return article
    return article + 1


def live_top(client: NNTPClient, info: GroupInfo, created_at: datetime) -> int:
    """The last article posted before live indexing began."""
    return first_at_or_after(client, info, int(created_at.timestamp())) - 1


def history_span(
    client: NNTPClient, group: Group, since: int | None
) -> tuple[int, int, str] | None:
    """(bottom, top, note) of a group's history on the server, None when it has none."""
    info = client.group(group.name)
    if info.count == 0 or info.last < info.first:
        return None
    top = live_top(client, info, group.created_at)
    bottom = info.first if since is None else first_at_or_after(client, info, since)
    note = ""
    if top < info.first:
        note = "live indexing began before the server's first article"
    elif bottom > top:
        note = "nothing posted in those days before live indexing began"
    return bottom, top, note


# --- plans ------------------------------------------------------------------


class PlanRun(TypedDict, total=False):
    """How a plan runs: the news server's pool (the coordinator's by default), a
    progress callback per group probed, and the actor the audit log names."""

    pool: NNTPPool | None
    progress: Progress | None
    actor: Any


def plan_ranges(
    groups: Iterable[Group | str],
    days: float | None = None,
    size: int | None = None,
    priority: int | None = None,
    dry_run: bool = False,
    **run: Unpack[PlanRun],
) -> PlanSummary:
    """Plan the history of `groups` (Group rows or names); see the module docstring.

    Unknown names raise UnknownGroups before anything is asked or written.
    """
    summary = _new_summary(days, size, priority, settings.DEFAULT_PRIORITY, dry_run)
    rows = resolve_groups(groups)
    _, now = database_now()
    since = None if days is None else int(now - days * 86400)

    def probe(client: NNTPClient, group: Group, plan: GroupPlan) -> None:
        span = history_span(client, group, since)
        if span is None:
            plan.note = "no articles on the news server"
        else:
            plan.low, plan.high, plan.note = span

    return _run_plan(summary, rows, probe, run, kind="history")


def plan_tail(
    *,
    size: int | None = None,
    priority: int | None = None,
    dry_run: bool = False,
    **run: Unpack[PlanRun],
) -> PlanSummary:
    """Plan each active group's new articles: beyond the highest planned one up to GROUP's last.

    A group with no ranges yet starts where live indexing began.
    """
    summary = _new_summary(None, size, priority, settings.TAIL_PRIORITY, dry_run)
    rows = list(Group.objects.filter(active=True).order_by("priority", "name"))
    highest = {
        row.group_id: row.highest
        for row in queries.fetchall("highest_planned", {"group_ids": [g.id for g in rows]})
    }

    def probe(client: NNTPClient, group: Group, plan: GroupPlan) -> None:
        info = client.group(group.name)
        if group.id in highest:
            low = highest[group.id] + 1
        elif info.count == 0 or info.last < info.first:
            low = info.last + 1
        else:
            low = max(live_top(client, info, group.created_at) + 1, info.first)
        plan.low, plan.high = low, info.last
        if low > info.last:
            plan.note = "nothing new"

    return _run_plan(summary, rows, probe, run, kind="tail")


def _new_summary(
    days: float | None, size: int | None, priority: int | None, default: int, dry_run: bool
) -> PlanSummary:
    size = settings.PLAN_RANGE_SIZE if size is None else size
    priority = default if priority is None else priority
    check_plan_options(days, size, priority)
    return PlanSummary(dry_run=dry_run, priority=priority, size=size)


def _run_plan(
    summary: PlanSummary, rows: list[Group], probe: Probe, run: PlanRun, *, kind: str
) -> PlanSummary:
    """Probe each group, then write the plan (a history plan hands the backfill off)."""
    if rows:
        pool = run.get("pool") or news_pool()
        _probe_groups(summary, rows, pool, run.get("progress"), probe)
        commit_plan(summary, hand_off_backfill=kind == "history")
        audit_plan(summary, run.get("actor"), kind)
    return summary


def _probe_groups(
    summary: PlanSummary,
    rows: list[Group],
    pool: NNTPPool,
    progress: Progress | None,
    probe: Probe,
) -> None:
    """Ask the news server about each group in turn; `probe` fills in its plan."""
    for index, group in enumerate(rows, 1):
        plan = GroupPlan(group.name, group.id)
        try:
            with pool.connection() as client:
                probe(client, group, plan)
        except NoSuchGroup:
            plan.note = "not on the news server"
        summary.groups.append(plan)
        if progress is not None:
            progress(plan, index, len(rows))


def audit_plan(summary: PlanSummary, actor: Any, kind: str) -> None:
    if summary.dry_run:
        return
    detail = {
        "kind": kind,
        "groups": [plan.group for plan in summary.groups if plan.ranges][:100],
        "articles": summary.articles,
        "size": summary.size,
        "priority": summary.priority,
    }
    record_audit(actor, AuditAction.PLANNED, "seed range", summary.ranges, detail)


def check_plan_options(days: float | None, size: int, priority: int) -> None:
    if days is not None and days < 0:
        raise Invalid("days: cannot be negative.")
    if size < 1:
        raise Invalid("size: a range holds at least 1 article.")
    if not -(2**31) <= priority < 2**31:
        raise Invalid("priority: out of range for an integer.")


def resolve_groups(groups: Iterable[Group | str]) -> list[Group]:
    """The Group rows, in (priority, name) order; every unknown name is an error."""
    wanted = [g.name if isinstance(g, Group) else str(g) for g in groups]
    for name in wanted:
        problem = group_name_problem(name)
        if problem is not None:  # it would go into GROUP on the news server
            raise Invalid(f"{problem} Nothing was planned.")
    rows = sorted(
        (row for batch in slices(wanted) for row in Group.objects.filter(name__in=batch)),
        key=lambda g: (g.priority, g.name),
    )
    unknown = sorted(set(wanted) - {g.name for g in rows})
    if unknown:
        raise UnknownGroups(
            f"Unknown group(s): {', '.join(unknown)}. Add them first (manage.py add_groups "
            "or the admin); nothing was planned."
        )
    return rows


def database_now() -> tuple[datetime, int]:
    row = queries.fetchone("database_now", {})
    assert row is not None
    return row.now, int(row.epoch)


def commit_plan(summary: PlanSummary, *, hand_off_backfill: bool) -> None:
    """Under the planning lock: read coverage, cut the gaps, insert; fills in the summary."""
    targets = [plan for plan in summary.groups if plan.low is not None and plan.high is not None]
    if not targets:
        return
    group_ids = [plan.group_id for plan in targets]
    with transaction.atomic():
        queries.fetchone("planning_lock", {})
        if hand_off_backfill:
            points = {
                row.id: (row.backfill_next_id, row.backfill_until_id)
                for row in queries.fetchall("backfill_points", {"group_ids": group_ids})
            }
            for plan in targets:
                if plan.group_id not in points or plan.high is None or plan.low is None:
                    continue
                next_id, until = points[plan.group_id]
                if next_id < plan.high:
                    plan.note = plan.note or "top lowered to the backfill's resume point"
                plan.high = min(plan.high, next_id)
                # A running backfill stops here, so the plan takes over all it
                # had left, down to its target even below the plan's bottom.
                if until is not None and next_id > until and until < plan.low:
                    plan.note = plan.note or "bottom lowered to the running backfill's target"
                    plan.low = until
        covered: dict[int, list[Span]] = defaultdict(list)
        for row in queries.fetchall("covered_spans", {"group_ids": group_ids}):
            covered[row.group_id].append((row.start_id, row.end_id))
        per_group: list[list[Span]] = []
        for plan in targets:
            assert plan.low is not None and plan.high is not None
            gaps = uncovered(covered[plan.group_id], plan.low, plan.high)
            pieces = cut(gaps, summary.size)
            plan.gaps, plan.ranges = len(gaps), len(pieces)
            plan.articles = sum(end - start + 1 for start, end in pieces)
            per_group.append(pieces)
        if summary.dry_run:
            return
        ordered = ((targets[index].group_id, span) for index, span in interleave(per_group))
        insert_ranges(ordered, summary.priority)
        if hand_off_backfill:
            queries.execute("hand_off_backfill", {"group_ids": group_ids})
    for plan in targets:
        if plan.ranges:
            log.info(
                "planned %s: %d ranges, %d articles (%d..%d)",
                plan.group,
                plan.ranges,
                plan.articles,
                plan.low,
                plan.high,
            )


def insert_ranges(rows: Iterable[tuple[int, Span]], priority: int) -> int:
    """COPY queued ranges (group id, (start, end)) in the given order; returns the count.

    Runs inside the caller's transaction; created_at is the database's now().
    """
    created_at, _ = database_now()
    queued = RangeStatus.QUEUED.value
    return queries.copy_rows(
        "copy_ranges",
        (
            (gid, start, end, start, queued, priority, False, 0, 0, 0, 0, 0, "", created_at)
            for gid, (start, end) in rows
        ),
    )
