"""Reads of the console: the status report (API, seed_status) and the dashboard."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from catalog.release_backfill import backfill_status
from catalog.selectors import CatalogTotals, catalog_totals, catalog_totals_by_group
from core.replicas import NOT_CONFIGURED, ReplicaState, read_tolerating_lag, replica_state
from indexer.space import catalog_full, leasing_paused
from leases.selectors import lanes_status
from seeding.models import RangeStatus
from seeding.selectors import range_totals

from .sql import queries


def paused_reason() -> str | None:
    """Why range leasing is paused, if it is (the database or the catalog is too big)."""
    return leasing_paused()


NODE_COUNTS = (
    "live_leases",
    "quiet_leases",
    "headers_last_hour",
    "headers_total",
    "ranges_finished_last_hour",
    "finished_headers_last_hour",
)


def nodes_activity(ttl: int, *, totals: bool = True) -> list[dict[str, Any]]:
    """Every node's leases, lanes and headers (live and quiet apart), by name.

    totals=False leaves out the all-time headers (None), so only the last hour
    of the rollup is read, whatever has been folded.
    """
    mark = queries.fetchone("header_fold_mark", {}) if totals else None
    params = {"ttl": ttl, "mark": mark.mark if mark else None, "totals": totals}
    return queries.fetchdicts_planned("nodes_status", params)


def seed_status() -> dict[str, Any]:
    nodes = [
        {
            "name": row["name"],
            "last_seen": row["last_seen_at"].isoformat() if row["last_seen_at"] else None,
            "disabled": row["disabled"],
            **{key: int(row[key]) for key in NODE_COUNTS},
        }
        for row in nodes_activity(settings.LEASE_TTL_SECONDS)
    ]
    finished = {
        "ranges": sum(n["ranges_finished_last_hour"] for n in nodes),
        "headers": sum(n["finished_headers_last_hour"] for n in nodes),
    }
    return {
        "ranges": range_totals(),
        "catalog": catalog_totals().as_dict(),
        "nodes": nodes,
        "lanes": lanes_status(),
        "headers_last_hour": sum(n["headers_last_hour"] for n in nodes),
        "finished_last_hour": finished,
        "paused": paused_reason(),
        "catalog_full": catalog_full(),
        "release_backfill": release_backfill(),
    }


def release_backfill() -> dict[str, int] | None:
    """What the upkeep has left to read and count after an upgrade (estimates), or None when done."""
    status = backfill_status()
    return None if status.done else {"to_parse": status.to_parse, "to_count": status.to_count}


# --- the operators' dashboard -------------------------------------------------

DASHBOARD_GROUPS = 20
DASHBOARD_MAX_PAGE = 1_000_000  # far past any catalog of groups; keeps OFFSET in bigint
DASHBOARD_BINS = 120
DASHBOARD_NODES = 25
DASHBOARD_LANES = 25


@dataclass
class Coverage:
    """A group's coverage map: bins over its article span, and resume points."""

    low: int
    high: int
    bins: list[str]  # status per bin: done, reached, leased, queued, failed, gap
    resume_points: list[int] = field(default_factory=list)


@dataclass
class GroupRow:
    id: int
    name: str
    active: bool
    headers_per_hour: int
    planned: int
    reached: int
    headers: int
    files: int
    open: int
    ranges: dict[str, int]
    eta_seconds: float | None
    coverage: Coverage | None = None
    catalog: CatalogTotals = field(default_factory=CatalogTotals)


@dataclass
class Dashboard:
    totals: dict[str, int]
    catalog: CatalogTotals
    by_status: dict[str, dict[str, int]]
    groups: list[GroupRow]
    groups_matching: int
    page: int
    pages: int
    search: str
    hourly: list[tuple[Any, int]]
    node_counts: dict[str, int]
    nodes: list[dict[str, Any]]
    lanes: list[dict[str, Any]]
    paused: str | None
    replica: ReplicaState = NOT_CONFIGURED


def _coverage(rows: list[dict[str, Any]], leased: list[dict[str, Any]]) -> Coverage:
    low, high = int(rows[0]["lo"]), int(rows[0]["hi"])
    width = high - low + 1
    bins: list[str] = []
    points: set[int] = set()
    for index, row in enumerate(rows):
        status = row["status"]
        article = low + (width * (2 * index + 1)) // (2 * len(rows))
        if status in (RangeStatus.QUEUED, RangeStatus.LEASED) and row["next_id"] > article:
            status = "reached"  # the covering range is read past this bin already
        bins.append(status)
        if status != "gap" and row["start_id"] < row["next_id"] <= row["end_id"]:
            points.add(int(row["next_id"]))
    points.update(int(r["next_id"]) for r in leased if r["next_id"] <= r["end_id"])
    return Coverage(low, high, bins, sorted(points))


def _group_row(
    r: dict[str, Any],
    in_work: list[dict[str, Any]],
    bins: list[dict[str, Any]] | None,
    catalog: dict[int, CatalogTotals],
) -> GroupRow:
    """One group of the page: its summary row plus the live progress of its leased ranges."""
    gid = int(r["id"])
    reached = int(r["reached"]) + sum(x["next_id"] - x["start_id"] for x in in_work)
    remaining = max(int(r["open"]) - sum(x["next_id"] - x["start_id"] for x in in_work), 0)
    rate = int(r["recent_headers"])
    return GroupRow(
        id=gid,
        name=r["name"],
        active=r["active"],
        headers_per_hour=rate,
        planned=int(r["planned"]),
        reached=reached,
        headers=int(r["headers"]) + sum(int(x["headers"]) for x in in_work),
        files=int(r["files"]) + sum(int(x["files"]) for x in in_work),
        open=remaining,
        ranges={s: int(r[f"{s}_ranges"]) for s in RangeStatus.values},
        eta_seconds=(0.0 if remaining == 0 else remaining / rate * 3600 if rate else None),
        coverage=_coverage(bins, in_work) if bins else None,
        catalog=catalog.get(gid, CatalogTotals()),
    )


def dashboard(search: str = "", page: int = 1) -> Dashboard:
    """Everything the dashboard shows, in a bounded number of bounded queries."""
    search = search.strip()[:200]
    # A page past the last shows nothing; past this one the OFFSET would overflow.
    page = min(max(page, 1), DASHBOARD_MAX_PAGE)
    ttl = settings.LEASE_TTL_SECONDS
    by_status = range_totals()
    totals = {
        "planned": sum(v["articles"] for v in by_status.values()),
        "reached": sum(v["reached"] for v in by_status.values()),
        "headers": sum(v["headers"] for v in by_status.values()),
        "files": sum(v["files"] for v in by_status.values()),
    }
    rows = queries.fetchdicts(
        "group_page",
        {"search": search, "limit": DASHBOARD_GROUPS, "offset": (page - 1) * DASHBOARD_GROUPS},
    )
    matching = int(rows[0]["matching"]) if rows else 0
    ids = [int(r["id"]) for r in rows]
    leased: dict[int, list[dict[str, Any]]] = {}
    for r in queries.fetchdicts("leased_in_groups", {"group_ids": ids}):
        leased.setdefault(int(r["group_id"]), []).append(r)
    catalog = catalog_totals_by_group(ids)
    bins, hourly = read_tolerating_lag(lambda using: _history(ids, using))
    groups = [
        _group_row(r, leased.get(int(r["id"]), []), bins.get(int(r["id"])), catalog) for r in rows
    ]
    counts = queries.fetchdicts("node_counts", {"ttl": ttl})[0]
    nodes = busiest_nodes(ttl, DASHBOARD_NODES)
    return Dashboard(
        totals=totals,
        catalog=catalog_totals(),
        by_status=by_status,
        groups=groups,
        groups_matching=matching,
        page=page,
        pages=max((matching + DASHBOARD_GROUPS - 1) // DASHBOARD_GROUPS, 1),
        search=search,
        hourly=hourly,
        node_counts={k: int(v) for k, v in counts.items()},
        nodes=nodes,
        lanes=lanes_status(DASHBOARD_LANES),
        paused=paused_reason(),
        replica=replica_state(),
    )


def _history(
    group_ids: list[int], using: str
) -> tuple[dict[int, list[dict[str, Any]]], list[tuple[Any, int]]]:
    """The dashboard's slow reads, which tolerate a replica's bounded lag: the groups'
    coverage maps and the headers of the last day by hour."""
    bins: dict[int, list[dict[str, Any]]] = {}
    if group_ids:
        params = {"group_ids": group_ids, "bins": DASHBOARD_BINS}
        for r in queries.fetchdicts("coverage_bins", params, using=using):
            bins.setdefault(int(r["group_id"]), []).append(r)
    hourly = [
        (r.hour, int(r.headers)) for r in queries.fetchall("headers_per_hour", {}, using=using)
    ]
    return bins, hourly


def busiest_nodes(ttl: int, limit: int) -> list[dict[str, Any]]:
    """The nodes with the most headers in the last hour, then the most live leases and
    lanes held (quiet leases, past the TTL and not taken back yet, are counted apart)."""
    rows = nodes_activity(ttl, totals=False)
    rows.sort(key=lambda r: (-r["headers_last_hour"], -(r["live_leases"] + r["lanes_held"])))
    return [
        {
            "name": r["name"],
            "state": _node_state(r["disabled"], r["live"]),
            "seen_seconds_ago": r["seen_seconds_ago"],
            "ranges_held": int(r["live_leases"]),
            "ranges_quiet": int(r["quiet_leases"]),
            "lanes_held": int(r["lanes_held"]),
            "headers_per_hour": int(r["headers_last_hour"]),
        }
        for r in rows[:limit]
    ]


def _node_state(disabled: bool, live: bool) -> str:
    if disabled:
        return "disabled"
    return "live" if live else "quiet"
