"""`manage.py plan_seed GROUP... [--all-active] [--days N] [--size N] [--priority N] [--dry-run]`."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.commands import command_errors
from core.progress import ProgressBar
from core.tables import format_table
from indexer.models import Group
from seeding.planning import GroupPlan, PlanSummary, plan_ranges


def render_plan(summary: PlanSummary) -> str:
    rows = [
        [
            plan.group,
            "" if plan.low is None else f"{plan.low:,}",
            "" if plan.high is None else f"{plan.high:,}",
            f"{plan.ranges:,}",
            f"{plan.gaps:,}",
            f"{plan.articles:,}",
            plan.note,
        ]
        for plan in summary.groups
    ]
    table = format_table(["group", "from", "to", "ranges", "gaps", "articles", "note"], rows)
    verb = "Would plan" if summary.dry_run else "Planned"
    return (
        f"{table}\n{verb} {summary.ranges:,} ranges, {summary.articles:,} articles "
        f"(at most {summary.size:,} per range, priority {summary.priority})."
    )


class Command(BaseCommand):
    help = "Plan the history of groups as seed ranges, from the news server (see docs/planning.md)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("groups", nargs="*", metavar="GROUP", help="group names")
        parser.add_argument("--all-active", action="store_true", help="every active group")
        parser.add_argument("--days", type=float, help="only the last N days (default: all)")
        parser.add_argument("--size", type=int, help="articles per range (PLAN_RANGE_SIZE)")
        parser.add_argument(
            "--priority", type=int, help="a lower number is more urgent (DEFAULT_PRIORITY)"
        )
        parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")

    def handle(self, *args: Any, **options: Any) -> str:
        names = list(options["groups"])
        if options["all_active"]:
            names += Group.objects.filter(active=True).values_list("name", flat=True)
        if not names:
            raise CommandError("Name groups to plan, or pass --all-active.")
        summary = self.plan(
            names, options["days"], options["size"], options["priority"], options["dry_run"]
        )
        return render_plan(summary)

    def plan(
        self,
        names: list[str],
        days: float | None,
        size: int | None,
        priority: int | None,
        dry_run: bool,
    ) -> PlanSummary:
        self.bar = ProgressBar(self.stderr._out, len(dict.fromkeys(names)), unit="groups")
        with command_errors(self.bar, after="; nothing was planned."):
            return plan_ranges(
                dict.fromkeys(names), days, size, priority, dry_run, progress=self.progress
            )

    def progress(self, plan: GroupPlan, index: int, total: int) -> None:
        span = "" if plan.low is None else f" {plan.low:,}..{plan.high:,}"
        self.bar.total = total
        self.bar.update(index, f"{plan.group}{span}")
