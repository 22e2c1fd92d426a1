"""`manage.py add_groups WILDMAT [--dry-run]`: add the groups the news server lists."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.commands import command_errors
from core.progress import ProgressBar
from core.tables import format_table
from indexer.services import AddedGroups, add_groups


class Command(BaseCommand):
    help = (
        "Add the groups the news server lists for a wildmat (LIST ACTIVE), e.g. 'alt.binaries.*'."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("wildmat", help="RFC 3977 wildmat, e.g. 'alt.binaries.*,!*.d'")
        parser.add_argument("--dry-run", action="store_true", help="list, add nothing")

    def handle(self, *args: Any, **options: Any) -> str:
        result = self.add(options["wildmat"], options["dry_run"])
        return self.summary(result)

    def add(self, wildmat: str, dry_run: bool) -> AddedGroups:
        # LIST ACTIVE does not say how many groups will come: a counter, no bar.
        self.bar = ProgressBar(self.stderr._out, unit="groups listed")
        with command_errors(self.bar):
            return add_groups(wildmat, dry_run, progress=self.progress)

    def progress(self, name: str, count: int) -> None:
        if count % 100 == 0:
            self.bar.update(count, name)

    def summary(self, result: AddedGroups) -> str:
        verb = "would add" if result.dry_run else "added"
        rows = [[name, verb] for name in result.added[:50]]
        lines = [format_table(["group", ""], rows)] if rows else []
        if len(result.added) > 50:
            lines.append(f"... and {len(result.added) - 50:,} more")
        lines.append(
            f"The server listed {result.listed:,} groups: {verb} {len(result.added):,}, "
            f"{result.known:,} already known."
        )
        if result.refused:
            shown = ", ".join(repr(name) for name in result.refused[:10])
            lines.append(
                f"Refused {len(result.refused):,} listed name(s) that are not RFC 3977"
                f" group names: {shown}."
            )
        return "\n".join(lines)
