"""`manage.py parse_release_names`: read the fields of stored releases' names again.

Releases read under an older parser (`fields_version` below
usenet.release_names.FIELDS_VERSION, 0 for those stored before the fields
existed) get their fields and their category again, in batches, one short
transaction each, with a progress bar on stderr. Resumable: a release records
the parser version it was read under, so a killed run continues where it
stopped, and a second run finds nothing to do.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog.release_fields import ParseSummary, parse_release_names
from core.progress import ProgressBar


class Command(BaseCommand):
    help = "Read the name fields (and category) of releases read under an older parser."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=1000, help="releases per transaction")
        parser.add_argument(
            "--after", type=int, default=0, help="start after this release id (to resume a run)"
        )

    def handle(self, *args: Any, **options: Any) -> str:
        bar = ProgressBar(self.stderr._out, unit="releases")

        def progress(summary: ParseSummary) -> None:
            bar.total = summary.total
            bar.update(summary.releases)

        try:
            summary = parse_release_names(
                max(1, options["batch_size"]), progress, after=max(0, options["after"])
            )
        finally:
            bar.finish()
        return (
            f"{summary.releases:,} releases read under parser v{summary.fields_version}"
            f" ({summary.recategorized:,} changed category under rule set"
            f" v{summary.rule_version})."
        )
