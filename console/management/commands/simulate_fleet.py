"""`manage.py simulate_fleet --url URL --tokens FILE`: simulated seed nodes against a coordinator.

The nodes speak the node API over HTTP (simulator/fleet.py) and report
generated files into that coordinator's catalog: point it at a test
coordinator, never at a production one. Figures: docs/performance.md, "Fleet
simulator".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from simulator.fleet import (
    CPU_HEADER,
    ENDPOINT_HEADER,
    SUMMARY_HEADER,
    CpuMeter,
    Profile,
    Stats,
    endpoint_rows,
    run_blocking,
    run_fleet,
    summary_row,
    table,
)

# Options named after Profile's fields (`lane_share` is --lane-share); the defaults are Profile's.
PROFILE_OPTIONS = {
    "think": "pause after each call (seconds)",
    "files": "files per batch",
    "segments": "segments per file",
    "lane_share": "share of lane holders",
    "release_share": "ranges released",
}


class Command(BaseCommand):
    help = (
        "Run simulated seed nodes against a coordinator's node API: leases, batches of"
        " generated files, heartbeats, lanes and snapshots; print rates, latencies and errors."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--url", required=True, help="the coordinator, e.g. http://127.0.0.1:8000"
        )
        parser.add_argument(
            "--token", action="append", default=[], help="a node token (repeatable)"
        )
        parser.add_argument("--tokens", type=Path, help="a file of node tokens, one a line")
        parser.add_argument(
            "--nodes", type=int, default=10, help="simulated nodes (tokens shared round-robin)"
        )
        parser.add_argument("--seconds", type=float, default=30.0)
        defaults = Profile()
        for name, text in PROFILE_OPTIONS.items():
            default = getattr(defaults, name)
            option = "--" + name.replace("_", "-")
            parser.add_argument(option, type=type(default), default=default, help=text)
        parser.add_argument(
            "--ping", action="store_true", help="first the no-op (GET /api/v1/ping)"
        )
        parser.add_argument(
            "--file-objects", action="store_true",
            help="batches as File objects, not columnar (a coordinator from before the columnar form)",
        )  # fmt: skip
        parser.add_argument("--timeout", type=float, default=60.0, help="a call's timeout")
        parser.add_argument(
            "--pid", type=int, action="append", default=[],
            help="a local process (and its children) whose CPU to report, e.g. gunicorn's master",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> None:
        tokens = list(options["token"])
        if options["tokens"]:
            tokens += [t.strip() for t in options["tokens"].read_text().splitlines() if t.strip()]
        if not tokens:
            raise CommandError("Give node tokens with --token or --tokens FILE.")
        if options["nodes"] < 1 or options["seconds"] <= 0:
            raise CommandError("--nodes must be at least 1 and --seconds above 0.")
        profile = Profile(
            **{name: options[name] for name in PROFILE_OPTIONS}, columns=not options["file_objects"]
        )
        kinds = ["ping", "mix"] if options["ping"] else ["mix"]
        rows, endpoints = [], []
        for kind in kinds:
            stats, cpu = self.run(kind, tokens, profile, options)
            rows.append(summary_row(f"{kind} {options['nodes']}", stats, cpu))
            endpoints += endpoint_rows(f"{kind} {options['nodes']}", stats)
        header = [*SUMMARY_HEADER, *CPU_HEADER] if options["pid"] else list(SUMMARY_HEADER)
        self.stdout.write(table(header, rows) + "\n\n" + table(ENDPOINT_HEADER, endpoints))

    def run(
        self, kind: str, tokens: list[str], profile: Profile, options: dict[str, Any]
    ) -> tuple[Stats, dict[str, float] | None]:
        meter = CpuMeter({f"pid {p}": p for p in options["pid"]}) if options["pid"] else None
        if meter is not None:
            meter.start()  # includes the ramp (a second)
        stats = run_blocking(
            run_fleet(
                options["url"], tokens, options["nodes"], options["seconds"], profile,
                ping=kind == "ping", timeout=options["timeout"],
            )
        )  # fmt: skip
        return stats, None if meter is None else meter.cores()
