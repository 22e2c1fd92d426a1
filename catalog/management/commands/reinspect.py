"""`manage.py reinspect RELEASE_ID...`: queue releases for inspection again.

What the admin's "Inspect the selected releases again" action does, from a
terminal: the releases are queued through the inspections app's hook
(catalog.inspection.request_reinspection); their posted names stay kept.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from catalog.inspection import request_reinspection
from core.errors import DomainError
from usenet.numbers import NotANumber, whole_number


class Command(BaseCommand):
    help = "Queue releases for inspection again (their par2, nfo and first archive volume)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("release_ids", nargs="+", metavar="RELEASE_ID", help="release ids")

    def handle(self, *args: Any, **options: Any) -> str:
        ids = []
        for text in options["release_ids"]:
            try:
                ids.append(whole_number(text, low=1))
            except NotANumber as refused:
                raise CommandError(
                    f"{text!r} is no release id: expected {refused.expected}."
                ) from None
        try:
            with transaction.atomic():
                queued = request_reinspection(ids, "manage.py reinspect")
        except DomainError as error:
            raise CommandError(error.detail) from None
        return f"{queued} releases queued for inspection."
