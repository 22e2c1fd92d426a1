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

from collections.abc import Callable
from typing import Any

from catalog.release_counts import RecountSummary, recount_releases
from core.commands import ReleaseBatchCommand


class Command(ReleaseBatchCommand):
    help = "Count every release again from its files (a cross-posted file once)."

    def run(self, options: dict[str, Any], progress: Callable[[Any], None]) -> RecountSummary:
        return recount_releases(options["batch_size"], progress, after=options["after"])

    def describe(self, summary: RecountSummary) -> str:
        return (
            f"{summary.releases:,} releases counted: {summary.changed:,} corrected,"
            f" {summary.listed:,} listed, {summary.unlisted:,} no longer listed."
        )
