"""`manage.py rotate_api_key NAME`: a new key for an API user, printed once; the old one
stops working at once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.commands import command_errors
from newznab.management.key_commands import EXIT_CODES, STORE_IT
from newznab.services import rotate_api_key


class Command(BaseCommand):
    help = (
        "Rotate an API user's key and print the new one once, alone on stdout; the old key "
        "stops working at once. Exit status: 3 no such user, 6 the user is disabled."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the API user, e.g. sonarr-home")

    def handle(self, *args: Any, name: str, **options: Any) -> str:
        with command_errors(exit_codes=EXIT_CODES):
            api_key, key = rotate_api_key(name)
        self.stderr.write(f"Rotated the API key of {api_key.name!r}. {STORE_IT}")
        return key
