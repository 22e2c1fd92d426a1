"""`manage.py inspections list|requeue|fail`: what the admin's inspection list does.

manage.py inspections list [--status failed] [--limit 50]
manage.py inspections requeue ID [ID ...]
manage.py inspections fail ID [ID ...] [--reason TEXT]
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.tables import format_table
from inspections import services
from inspections.models import Inspection, InspectionStatus
from usenet.numbers import NotANumber, whole_number

MAX_IDS = 10_000


class Command(BaseCommand):
    help = "List inspections, queue them again, or mark them failed."

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        listing = actions.add_parser("list", help="the newest inspections, with their state")
        listing.add_argument("--status", choices=InspectionStatus.values)
        listing.add_argument("--limit", default="50", help="1 to 10,000 (default 50)")
        requeue = actions.add_parser("requeue", help="queue again, attempts reset")
        requeue.add_argument("ids", nargs="+", metavar="ID")
        fail = actions.add_parser("fail", help="mark failed with a reason")
        fail.add_argument("ids", nargs="+", metavar="ID")
        fail.add_argument("--reason", default="marked failed by an operator")

    def handle(self, *args: Any, **options: Any) -> str:
        action = options["action"]
        if action == "list":
            return self.listing(options["status"], options["limit"])
        if len(options["ids"]) > MAX_IDS:
            raise CommandError(
                f"At most {MAX_IDS:,} ids at once; {len(options['ids']):,} were given."
            )
        ids = [_number(text, "an inspection id", low=1) for text in options["ids"]]
        if action == "requeue":
            count = services.requeue_inspections(ids)
            return f"Queued {count:,} of {len(ids):,} inspections again."
        reason = options["reason"].strip()
        if not reason:
            raise CommandError("--reason needs some text: it is shown as the inspection's error.")
        count = services.fail_inspections(ids, reason)
        return f"Marked {count:,} of {len(ids):,} inspections failed (queued or leased ones only)."

    def listing(self, status: str | None, limit_text: str) -> str:
        limit = _number(limit_text, "a --limit", low=1, high=10_000)
        rows = Inspection.objects.select_related("release", "node").order_by("-id")
        if status:
            rows = rows.filter(status=status)
        table = [
            [r.id, r.status, r.release_id, r.release.name[:60], str(r.node) if r.node_id else "",
             r.attempts, r.error[:80]]
            for r in rows[:limit]
        ]  # fmt: skip
        if not table:
            return "No inspections."
        return format_table(["id", "status", "release", "name", "node", "attempts", "error"], table)


def _number(text: str, what: str, *, low: int, high: int | None = None) -> int:
    """A whole number read as usenet.numbers reads every number from text (ASCII digits,
    within a bigint or `high`); CommandError saying what was expected otherwise."""
    try:
        if high is None:
            return whole_number(text, low=low)
        return whole_number(text, low=low, high=high)
    except NotANumber as refused:
        raise CommandError(f"{text!r} is not {what}: expected {refused.expected}.") from None
