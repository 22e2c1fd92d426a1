"""`manage.py issue_api_key NAME [--rate-limit N]`: a new API user; its key printed once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.commands import command_errors
from newznab.management.key_commands import EXIT_CODES, STORE_IT, rate_limit
from newznab.services import issue_api_key


class Command(BaseCommand):
    help = (
        "Issue an API key for a new API user (a downloader or indexer manager) and print it "
        "once, alone on stdout. Exit status: 4 the name is taken, 5 a bad --rate-limit."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="who uses it, e.g. sonarr-home")
        parser.add_argument(
            "--rate-limit",
            metavar="N",
            help="requests a minute (0: no limit); default: NEWZNAB_RATE_LIMIT",
        )

    def handle(self, *args: Any, name: str, **options: Any) -> str:
        limit = rate_limit(options["rate_limit"])
        with command_errors(exit_codes=EXIT_CODES):
            api_key, key = issue_api_key(name, rate_limit=limit)
        self.stderr.write(f"Issued an API key for {api_key.name!r}. {STORE_IT}")
        return key
