"""`manage.py plan_inspections [--dry-run] [--from-start] [--mode M]`: plan the inspections
of every release not read yet (the upkeep does the same a step at a time)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.commands import command_errors
from core.progress import ProgressBar
from inspections import planning


class Command(BaseCommand):
    help = (
        "Plan an inspection for each release INSPECT_RELEASES names (obfuscated, other, all), "
        "from where planning stopped; idempotent (one row per release)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="count, write nothing")
        parser.add_argument(
            "--from-start",
            action="store_true",
            help="read every release again (rows stay one each)",
        )
        parser.add_argument("--mode", choices=planning.MODES, help="default: INSPECT_RELEASES")

    def handle(self, *args: Any, **options: Any) -> str:
        how = options["mode"] or planning.mode()
        if how == "off":
            raise CommandError("INSPECT_RELEASES is off: pass --mode to plan anyway.")
        with command_errors():
            if options["from_start"] and not options["dry_run"]:
                planning.reset_mark()
            if options["dry_run"]:
                read, wanted = planning.count_would_plan(how=how, from_start=options["from_start"])
                return f"{wanted:,} of {read:,} releases read need inspection ({how}); nothing written."
            bar = ProgressBar(self.stderr._out, unit="releases read")
            result = planning.plan_all(how=how, progress=lambda r: bar.update(r.read))
            bar.finish()
        return (
            f"Read {result.read:,} releases ({how}): {result.planned:,} inspections planned, "
            f"{result.refreshed:,} refreshed."
        )
