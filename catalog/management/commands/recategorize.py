"""`manage.py recategorize`: decide every release's category again after a rule change.

Releases decided under an older rule set version than the one in force (or
`--version`) are recategorized in batches, one transaction each, with a
progress bar on stderr. Resumable: each release records the version it was
decided under, so an interrupted run continues where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.core.management.base import CommandParser

from catalog.releases import RecategorizeSummary, recategorize_releases
from catalog.rulesets import current_rules
from core.commands import ReleaseBatchCommand, positive_int


class Command(ReleaseBatchCommand):
    help = "Recategorize the releases decided under an older rule set version."
    resumable = False  # each release records its version: a second run resumes by itself

    def add_arguments(self, parser: CommandParser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--rule-version", dest="rule_version", type=positive_int, default=None,
            help="the rule set version to decide under (default: the one in force)",
        )  # fmt: skip

    def run(self, options: dict[str, Any], progress: Callable[[Any], None]) -> RecategorizeSummary:
        version = options["rule_version"] or current_rules().version
        return recategorize_releases(version, options["batch_size"], progress)

    def describe(self, summary: RecategorizeSummary) -> str:
        return f"{summary.releases:,} releases recategorized under rule set v{summary.version}."
