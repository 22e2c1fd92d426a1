"""`manage.py seed_status [--json]`: ranges, nodes, lanes and throughput."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from console.selectors import seed_status
from indexer.tables import format_table

__all__ = ["render_status"]


class Command(BaseCommand):
    help = "Print the seeding status: ranges by status, nodes, lanes, headers in the last hour."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of tables")

    def handle(self, *args: Any, **options: Any) -> str:
        status = seed_status()
        if options["json"]:
            return json.dumps(status, indent=2)
        return render_status(status)


def render_status(status: dict[str, Any]) -> str:
    out = []
    rows = [
        [
            name,
            f"{v['ranges']:,}",
            f"{v['articles']:,}",
            f"{v['reached']:,}",
            f"{v['headers']:,}",
            f"{v['files']:,}",
        ]
        for name, v in status["ranges"].items()
    ]
    out.append(format_table(["status", "ranges", "articles", "reached", "headers", "files"], rows))
    out.append("")
    node_rows = [
        [
            n["name"],
            n["last_seen"] or "never",
            "disabled" if n["disabled"] else "",
            n["live_leases"],
            f"{n['headers_last_hour']:,}",
        ]
        for n in status["nodes"]
    ]
    out.append(
        format_table(["node", "last seen", "", "live leases", "headers, last hour"], node_rows)
        if node_rows
        else "No nodes yet: manage.py issue_token NAME"
    )
    if status.get("lanes"):
        out.append("")
        lane_rows = [
            [
                lane["group"],
                lane["lane"],
                (lane["holder"] or "") + ("" if lane["live"] or not lane["holder"] else " (quiet)"),
                lane["epoch"],
                lane["range"] or "",
                "" if lane["snapshot_next"] is None else lane["snapshot_next"],
                "" if lane["snapshot_age_seconds"] is None else f"{lane['snapshot_age_seconds']}s",
                "" if lane["snapshot_size"] is None else f"{lane['snapshot_size']:,}",
                lane["ranges_done"],
                f"{lane['headers']:,}",
            ]
            for lane in status["lanes"]
        ]
        out.append(
            format_table(
                [
                    "group",
                    "lane",
                    "holder",
                    "epoch",
                    "range",
                    "snapshot next",
                    "age",
                    "size",
                    "ranges done",
                    "headers",
                ],
                lane_rows,
            )
        )
    out.append("")
    out.append(f"Headers in the last hour: {status['headers_last_hour']:,}")
    out.append(f"Leasing paused: {status['paused']}" if status["paused"] else "Leasing: open")
    if status.get("catalog_full"):
        out.append(f"Catalog full: {status['catalog_full']}")
    return "\n".join(out)
