"""`manage.py seed_node ...`: the seed node agent, exactly as `seed-node ...`.

The options are the agent's own (see `seed-node --help`); nothing here touches
the database, so no system or migration checks run.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand

from seed_node.cli import main


class Command(BaseCommand):
    help = "Run the seed node agent (the same as the seed-node command; see --help)."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def run_from_argv(self, argv: list[str]) -> None:
        # argv is [manage.py, seed_node, ...]: hand the rest to the agent untouched.
        sys.exit(main(argv[2:]))

    def handle(self, *args: Any, **options: Any) -> None:
        sys.exit(main(list(args)))
