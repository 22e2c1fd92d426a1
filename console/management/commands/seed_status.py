"""`manage.py seed_status [--json]`: ranges, catalog totals, nodes, lanes and throughput."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from console.selectors import seed_status
from core.tables import format_table

__all__ = ["render_status"]


class Command(BaseCommand):
    help = (
        "Print the seeding status: ranges by status, catalog totals, nodes, lanes, headers in"
        " the last hour."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of tables")

    def handle(self, *args: Any, **options: Any) -> str:
        status = seed_status()
        if options["json"]:
            return json.dumps(status, indent=2)
        return render_status(status)


RANGE_COLUMNS = ["status", "ranges", "articles", "reached", "headers", "files"]
CATALOG_COLUMNS = ["catalog files", "complete", "segments", "bytes", "conflicts", "newest post"]
NODE_COLUMNS = [
    "node", "last seen", "", "live leases", "quiet leases", "headers, last hour",
    "headers, all time", "ranges finished, last hour", "their headers",
]  # fmt: skip
LANE_COLUMNS = [
    "group", "lane", "holder", "epoch", "range", "snapshot next", "age", "size", "ranges done",
    "headers",
]  # fmt: skip


def render_status(status: dict[str, Any]) -> str:
    out = [range_table(status["ranges"]), "", catalog_table(status["catalog"])]
    out += ["", node_table(status["nodes"])]
    if status.get("lanes"):
        out += ["", lane_table(status["lanes"])]
    out.append("")
    out.append(f"Headers in the last hour: {status['headers_last_hour']:,}")
    finished = status["finished_last_hour"]
    out.append(
        f"Ranges finished in the last hour: {finished['ranges']:,}"
        f" ({finished['headers']:,} headers)"
    )
    out.append(f"Leasing paused: {status['paused']}" if status["paused"] else "Leasing: open")
    if status.get("catalog_full"):
        out.append(f"Catalog full: {status['catalog_full']}")
    if backfill := status.get("release_backfill"):
        out.append(
            f"After the upgrade, releases to parse: about {backfill['to_parse']:,};"
            f" to count: about {backfill['to_count']:,} (the upkeep does it)"
        )
    return "\n".join(out)


def range_table(ranges: dict[str, dict[str, int]]) -> str:
    keys = RANGE_COLUMNS[1:]
    return format_table(
        RANGE_COLUMNS, [[name, *(f"{v[k]:,}" for k in keys)] for name, v in ranges.items()]
    )


def catalog_table(catalog: dict[str, Any]) -> str:
    """The catalog's totals (exact: from the per-group summary the triggers keep)."""
    counts = [f"{catalog[k]:,}" for k in ("files", "complete", "segments", "bytes", "conflicts")]
    return format_table(CATALOG_COLUMNS, [[*counts, catalog["newest"] or "-"]])


def node_table(nodes: list[dict[str, Any]]) -> str:
    if not nodes:
        return "No nodes yet: manage.py issue_token NAME"
    rows = [
        [
            n["name"],
            n["last_seen"] or "never",
            "disabled" if n["disabled"] else "",
            n["live_leases"],
            n["quiet_leases"],
            f"{n['headers_last_hour']:,}",
            f"{n['headers_total']:,}",
            n["ranges_finished_last_hour"],
            f"{n['finished_headers_last_hour']:,}",
        ]
        for n in nodes
    ]
    return format_table(NODE_COLUMNS, rows)


def lane_table(lanes: list[dict[str, Any]]) -> str:
    return format_table(LANE_COLUMNS, [lane_row(lane) for lane in lanes])


def lane_row(lane: dict[str, Any]) -> list[Any]:
    def blank_if_none(key: str, shown: str = "{}") -> str:
        return "" if lane[key] is None else shown.format(lane[key])

    quiet = "" if lane["live"] or not lane["holder"] else " (quiet)"
    return [
        lane["group"],
        lane["lane"],
        (lane["holder"] or "") + quiet,
        lane["epoch"],
        lane["range"] or "",
        blank_if_none("snapshot_next"),
        blank_if_none("snapshot_age_seconds", "{}s"),
        blank_if_none("snapshot_size", "{:,}"),
        lane["ranges_done"],
        f"{lane['headers']:,}",
    ]
