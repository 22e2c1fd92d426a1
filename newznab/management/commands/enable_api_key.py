"""`manage.py enable_api_key NAME`: a disabled API user's key works again."""

from __future__ import annotations

from .disable_api_key import Command as DisableCommand


class Command(DisableCommand):
    help = "Enable a disabled API user: its key works again. Exit status: 3 no such user."
    disabled = False
