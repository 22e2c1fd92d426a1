"""`manage.py recategorize`: decide every release's category again after a rule change.

Releases decided under an older rule set version than the one in force (or
`--version`) are recategorized in batches, one transaction each, with a
progress bar on stderr. Resumable: each release records the version it was
decided under, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from catalog.releases import RecategorizeSummary, recategorize_releases
from catalog.rulesets import current_rules
from core.progress import ProgressBar


class Command(BaseCommand):
    help = "Recategorize the releases decided under an older rule set version."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=1000, help="releases per transaction")
        parser.add_argument(
            "--rule-version", dest="rule_version", type=int, default=None,
            help="the rule set version to decide under (default: the one in force)",
        )  # fmt: skip

    def handle(self, *args: Any, **options: Any) -> str:
        version = options["rule_version"] or current_rules().version
        bar = ProgressBar(self.stderr._out, unit="releases")

        def progress(summary: RecategorizeSummary) -> None:
            bar.total = summary.total
            bar.update(summary.releases)

        try:
            summary = recategorize_releases(version, max(1, options["batch_size"]), progress)
        finally:
            bar.finish()
        return f"{summary.releases:,} releases recategorized under rule set v{version}."
