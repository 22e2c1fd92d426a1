"""`manage.py prune_catalog --incomplete-older-than HOURS [--batch-size N] [--pause S]`.

Deletes incomplete catalog files no batch has added to for HOURS, a batch at
a time (each batch commits, so autovacuum keeps up), printing progress and a
summary.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from catalog.services import PruneSummary, prune_incomplete_files
from core.commands import non_negative_float, positive_float, positive_int
from core.errors import DomainError
from core.progress import ProgressBar
from core.tables import format_table


def describe(summary: PruneSummary) -> str:
    table = format_table(
        ["files", "segments", "GiB of posts", "batches"],
        [
            [
                f"{summary.files:,}",
                f"{summary.segments:,}",
                f"{summary.bytes / 2**30:.2f}",
                f"{summary.batches:,}",
            ]
        ],
    )
    return (
        table
        + "\n"
        + (
            f"{summary.files:,} incomplete file(s) deleted ({summary.segments:,} segments, "
            f"{summary.bytes / 2**30:.2f} GiB of posts) in {summary.batches} batch(es); "
            f"untouched since {summary.cutoff:%Y-%m-%d %H:%M:%S %Z}."
        )
    )


class Command(BaseCommand):
    help = "Delete incomplete catalog files that no batch has added to for a number of hours."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--incomplete-older-than",
            type=positive_float,
            required=True,
            metavar="HOURS",
            help="delete incomplete files last added to more than HOURS ago",
        )
        parser.add_argument(
            "--batch-size", type=positive_int, default=10_000, help="files per transaction"
        )
        parser.add_argument(
            "--pause", type=non_negative_float, default=0.0, help="seconds to wait between batches"
        )

    def handle(self, *args: Any, **options: Any) -> str:
        # How many files will go is not known up front (counting them is the slow part).
        bar = ProgressBar(self.stderr._out, unit="files deleted")

        def progress(summary: PruneSummary) -> None:
            bar.update(summary.files, f"batch {summary.batches}")

        try:
            summary = prune_incomplete_files(
                options["incomplete_older_than"],
                batch_size=options["batch_size"],
                pause=options["pause"],
                progress=progress,
            )
        except DomainError as error:
            raise CommandError(error.detail) from None
        finally:
            bar.finish()
        return describe(summary)
