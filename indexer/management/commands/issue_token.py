"""`manage.py issue_token NAME`: issue (or rotate) a node's token and print it once."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import DomainError
from indexer.services import issue_token


class Command(BaseCommand):
    help = "Issue a token for a seed node (rotating it if the node exists) and print it once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the node's name, e.g. seed-ams-1")

    def handle(self, *args: Any, name: str, **options: Any) -> str:
        try:
            node, token, created = issue_token(name)
        except DomainError as exc:
            raise CommandError(exc.detail) from exc
        verb = "Created" if created else "Rotated the token of"
        self.stderr.write(f"{verb} node {node.name!r}. The token is shown once; store it now:")
        return token
