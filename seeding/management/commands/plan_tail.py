"""`manage.py plan_tail [--every SECONDS]`: plan each active group's new articles."""

from __future__ import annotations

import signal
import threading
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections, connection

from core.commands import command_errors
from seeding.planning import GroupPlan, PlanSummary, plan_tail

from .plan_seed import render_plan


class Command(BaseCommand):
    help = (
        "Plan what the news server has beyond each active group's highest planned article, "
        "at TAIL_PRIORITY; once, or every N seconds until SIGTERM or Ctrl-C."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, help="repeat every SECONDS")
        parser.add_argument("--size", type=int, help="articles per range (PLAN_RANGE_SIZE)")
        parser.add_argument("--priority", type=int, help="default: TAIL_PRIORITY")
        parser.add_argument("--dry-run", action="store_true", help="show the plan, write nothing")

    def handle(self, *args: Any, **options: Any) -> str:
        every = options["every"]
        if every is not None and every <= 0:
            raise CommandError("--every takes a positive number of seconds.")
        if every is None:
            return render_plan(
                self.plan_once(options["size"], options["priority"], options["dry_run"])
            )
        return self.loop(every, options["size"], options["priority"], options["dry_run"])

    def plan_once(self, size: int | None, priority: int | None, dry_run: bool) -> PlanSummary:
        with command_errors():
            summary = plan_tail(
                size=size, priority=priority, dry_run=dry_run, progress=self.progress
            )
        self.stderr.write("")
        return summary

    def loop(self, every: float, size: int | None, priority: int | None, dry_run: bool) -> str:
        stop = threading.Event()
        previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
        rounds = ranges = 0
        try:
            while not stop.is_set():
                if not connection.in_atomic_block:
                    close_old_connections()  # a long-lived loop: drop broken or old connections
                try:
                    summary = self.plan_once(size, priority, dry_run)
                except CommandError as exc:
                    self.stderr.write(f"tail planning failed, retrying in {every:g} s: {exc}")
                else:
                    rounds += 1
                    ranges += summary.ranges
                    if summary.ranges:
                        self.stdout.write(render_plan(summary))
                stop.wait(every)
        except KeyboardInterrupt:
            pass
        finally:
            signal.signal(signal.SIGTERM, previous)
        return f"Stopped after {rounds} round(s); planned {ranges:,} tail ranges."

    def progress(self, plan: GroupPlan, index: int, total: int) -> None:
        self.stderr.write(f"\r{index}/{total} {plan.group}\x1b[K", ending="")
        self.stderr.flush()
