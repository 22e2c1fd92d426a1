"""`manage.py recount_releases`: count stored releases again from their files.

Each file name of a release counts once, as its fullest copy, however many
groups hold it: run it once after upgrading (a cross-posted release counted
its files once per group before), and whenever totals are in doubt. In
batches by id, one transaction each (locked in one statement, counted in a
second), with a progress bar on stderr; rows whose totals and listing are
right are not written. `listed` follows the true totals (docs/catalog.md,
"Listed releases").
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog.release_counts import RecountSummary, recount_releases
from core.progress import ProgressBar


class Command(BaseCommand):
    help = "Count every release again from its files (a cross-posted file once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=1000, help="releases per transaction")
        parser.add_argument(
            "--after", type=int, default=0, help="start after this release id (to resume a run)"
        )

    def handle(self, *args: Any, **options: Any) -> str:
        bar = ProgressBar(self.stderr._out, unit="releases")

        def progress(summary: RecountSummary) -> None:
            bar.total = summary.total
            bar.update(summary.releases)

        try:
            summary = recount_releases(
                max(1, options["batch_size"]), progress, after=max(0, options["after"])
            )
        finally:
            bar.finish()
        return (
            f"{summary.releases:,} releases counted: {summary.changed:,} corrected,"
            f" {summary.listed:,} listed, {summary.unlisted:,} no longer listed."
        )
