"""`manage.py ensure_admin`: make sure a staff login exists and say what it is
(core/admin_login.py: the password is kept in a file, never printed)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from core.admin_login import admin_login_message, ensure_admin


class Command(BaseCommand):
    help = "Create an admin login if there is none; print its user name and password file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        self.stdout.write(admin_login_message(*ensure_admin(username)))
