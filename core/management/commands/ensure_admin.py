"""`manage.py ensure_admin`: make sure a staff login exists and say what it is.

With no superuser yet, one named `admin` is created with a random password,
which is printed and kept in var/admin-password (mode 0600) so a newcomer can
find it again. An existing superuser is left alone.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser


def ensure_admin(username: str = "admin") -> tuple[str, str | None]:
    """Return (username, password or None when the user already existed)."""
    users = get_user_model()
    existing = users.objects.filter(is_superuser=True).order_by("id").first()
    if existing is not None:
        return existing.get_username(), None
    password = secrets.token_urlsafe(12)
    users.objects.create_superuser(username=username, email="", password=password)
    path = Path(settings.VAR_DIR) / "admin-password"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"{username} {password}\n", encoding="utf-8")
    path.chmod(0o600)
    return username, password


class Command(BaseCommand):
    help = "Create an admin login if there is none, and print it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args: Any, username: str, **options: Any) -> None:
        name, password = ensure_admin(username)
        if password:
            self.stdout.write(
                f"Admin login created: user {name!r}, password {password!r} (also in var/admin-password)"
            )
        else:
            saved = Path(settings.VAR_DIR) / "admin-password"
            hint = f" (its generated password is in {saved})" if saved.exists() else ""
            self.stdout.write(f"Admin login: user {name!r}{hint}")
