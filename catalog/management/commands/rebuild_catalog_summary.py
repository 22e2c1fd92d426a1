"""`manage.py rebuild_catalog_summary`: recount every group's catalog totals.

The triggers on catalog_file keep group_catalog_summary exact; this recounts
it from the files anyway (after a restore, a manual edit of catalog_file with
the triggers disabled, or to check), one group per transaction, prints each
group whose totals had drifted (kept, counted, difference) and puts the count
in place. Progress goes to stderr.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from django.core.management.base import BaseCommand

from catalog.services import SummaryDrift, rebuild_catalog_summary
from core.progress import ProgressBar
from core.tables import format_table

COLUMNS = ["group", "total", "kept", "counted", "difference"]


def drift_rows(drift: SummaryDrift) -> list[list[Any]]:
    rows = []
    for field in fields(drift.kept):
        kept, counted = getattr(drift.kept, field.name), getattr(drift.counted, field.name)
        if kept == counted:
            continue
        if field.name == "newest":
            shown = [kept.isoformat() if kept else "-", counted.isoformat() if counted else "-", ""]
        else:
            shown = [f"{kept:,}", f"{counted:,}", f"{counted - kept:+,}"]
        rows.append([drift.group, field.name, *shown])
    return rows


def describe(checked: int, drifts: list[SummaryDrift]) -> str:
    if not drifts:
        return f"{checked:,} groups checked, no drift."
    table = format_table(COLUMNS, [row for drift in drifts for row in drift_rows(drift)])
    return f"{table}\n{checked:,} groups checked, {len(drifts):,} with drift (fixed)."


class Command(BaseCommand):
    help = "Recount each group's catalog totals from its files, report any drift and fix it."

    def handle(self, *args: Any, **options: Any) -> str:
        bar = ProgressBar(self.stderr._out, unit="groups")

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.update(done)

        try:
            checked, drifts = rebuild_catalog_summary(progress)
        finally:
            bar.finish()
        return describe(checked, drifts)
