"""`manage.py parse_release_names`: read the fields of stored releases' names again.

Releases read under an older parser (`fields_version` below
usenet.release_names.FIELDS_VERSION, 0 for those stored before the fields
existed) get their fields and their category again, in batches, one short
transaction each, with a progress bar on stderr. Resumable: a release records
the parser version it was read under, so a killed run continues where it
stopped, and a second run finds nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from catalog.release_fields import ParseSummary, parse_release_names
from core.commands import ReleaseBatchCommand


class Command(ReleaseBatchCommand):
    help = "Read the name fields (and category) of releases read under an older parser."

    def run(self, options: dict[str, Any], progress: Callable[[Any], None]) -> ParseSummary:
        return parse_release_names(options["batch_size"], progress, after=options["after"])

    def describe(self, summary: ParseSummary) -> str:
        return (
            f"{summary.releases:,} releases read under parser v{summary.fields_version}"
            f" ({summary.recategorized:,} changed category under rule set"
            f" v{summary.rule_version})."
        )
