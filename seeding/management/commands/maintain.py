"""`manage.py maintain [--every SECONDS] [--rounds N]`: the periodic upkeep, once or in a loop.

Runs every task of `seeding.maintenance` (quiet range leases, the rollup's
hours and old minutes, the catalog's settled releases and its catch-up after
an upgrade, and what the apps
above register, such as stale snapshot parts). Without it the range-lease path still runs them now and
then; a deployment that runs `maintain --every 60` keeps them on time
whatever the traffic.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections, connection

from core.tables import format_table
from seeding import maintenance
from seeding.maintenance import Outcome


def _describe(outcomes: Sequence[Outcome]) -> str:
    """One line: what a round did."""
    return "; ".join(
        f"{o.task.label}: {o.count:,}" if o.error is None else f"{o.task.name} FAILED: {o.error}"
        for o in outcomes
    )


class Command(BaseCommand):
    help = (
        "Run the periodic upkeep (retire quiet range leases, fold rollup hours, prune old "
        "rollup minutes, remove stale snapshot parts, list settled releases, read and count "
        "releases again after an upgrade): once, or "
        "every N seconds until SIGTERM or Ctrl-C."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--every", type=float, help="repeat every SECONDS")
        parser.add_argument("--rounds", type=int, help="with --every: stop after N rounds")

    def handle(self, *args: Any, **options: Any) -> str:
        every, rounds = options["every"], options["rounds"]
        if every is not None and every <= 0:
            raise CommandError("--every takes a positive number of seconds.")
        if rounds is not None and (every is None or rounds < 1):
            raise CommandError("--rounds takes a positive number, with --every.")
        if every is None:
            return self.once()
        return self.loop(every, rounds)

    def once(self) -> str:
        outcomes = maintenance.run_all()
        rows = [
            [o.task.label, f"{o.count:,}" if o.error is None else f"failed: {o.error}"]
            for o in outcomes
        ]
        table = format_table(["task", "done"], rows)
        if any(o.error is not None for o in outcomes):
            self.stdout.write(table)
            raise CommandError("Some maintenance tasks failed (above).")
        return table

    def loop(self, every: float, rounds: int | None) -> str:
        stop = threading.Event()
        handlers = {
            signum: signal.signal(signum, lambda *_: stop.set())
            for signum in (signal.SIGTERM, signal.SIGINT)
        }
        done = 0
        try:
            while not stop.is_set():
                if not connection.in_atomic_block:
                    close_old_connections()  # a long-lived loop: drop broken or old connections
                outcomes = maintenance.run_all()
                done += 1
                self.stdout.write(
                    f"round {done} ({time.strftime('%H:%M:%S')}): {_describe(outcomes)}"
                )
                if rounds is not None and done >= rounds:
                    break
                stop.wait(every)
        finally:
            for signum, previous in handlers.items():
                signal.signal(signum, previous)
        return f"Stopped after {done} round(s)."
