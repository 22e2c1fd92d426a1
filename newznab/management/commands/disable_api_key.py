"""`manage.py disable_api_key NAME`: the API user's calls get error 101 until enabled."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.commands import command_errors
from newznab.management.key_commands import EXIT_CODES
from newznab.services import set_api_key_disabled


class Command(BaseCommand):
    help = (
        "Disable an API user: its calls get error 101 (account suspended) until "
        "manage.py enable_api_key. Exit status: 3 no such user."
    )
    disabled = True

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the API user, e.g. sonarr-home")

    def handle(self, *args: Any, name: str, **options: Any) -> None:
        with command_errors(exit_codes=EXIT_CODES):
            api_key, changed = set_api_key_disabled(name, self.disabled)
        state = "disabled" if self.disabled else "enabled"
        if changed:
            self.stdout.write(f"The API user {api_key.name!r} is {state}.")
        else:
            self.stdout.write(f"The API user {api_key.name!r} was {state} already.")
