"""The first admin login: made when there is no superuser, its password only in a file.

With no superuser yet, one named `admin` is created with a random password,
which is kept in var/admin-password (mode 0600) and never printed: under the
systemd unit standard output is the journal, which others may read and which
keeps it long after. What `serve` and `manage.py ensure_admin` print is the
user name and the file's path. An existing superuser is left alone.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model


def password_file() -> Path:
    return Path(settings.VAR_DIR) / "admin-password"


def write_password_file(path: Path, username: str, password: str) -> None:
    """`username password` in `path`, mode 0600 from its first byte (write_text and a
    chmod after it leave the file readable by others for a moment); an older file
    is replaced whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    part.unlink(missing_ok=True)
    fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f"{username} {password}\n")
    os.replace(part, path)


def ensure_admin(username: str = "admin") -> tuple[str, bool]:
    """Return (the superuser's username, whether it was created now)."""
    users = get_user_model()
    existing = users.objects.filter(is_superuser=True).order_by("id").first()
    if existing is not None:
        return existing.get_username(), False
    password = secrets.token_urlsafe(12)
    users.objects.create_superuser(username=username, email="", password=password)
    write_password_file(password_file(), username, password)
    return username, True


def admin_login_message(username: str, created: bool) -> str:
    """What `serve` and `ensure_admin` print: the user name and where the password is."""
    path = password_file()
    if created:
        return (
            f"Admin login created: user {username!r}; its password is in {path} "
            f"(mode 0600; read it with `cat {path}`)."
        )
    hint = f" (its generated password is in {path})" if path.exists() else ""
    return f"Admin login: user {username!r}{hint}"
