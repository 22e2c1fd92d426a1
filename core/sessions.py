"""Django's database sessions, reading only a session key of a key's form.

Django makes every key of 32 characters of a-z0-9, but takes any cookie of 8
or more characters as a key and looks it up: a NUL in it (a cookie can carry
one as the octal escape `\\000`) reached PostgreSQL, whose text cannot hold
it, as a 500. Here a cookie that is not of a key's form is no session, as an
unknown key is (`SESSION_ENGINE`).
"""

from __future__ import annotations

from typing import Any

from django.contrib.sessions.backends.db import SessionStore as DatabaseSessionStore

SESSION_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def is_session_key(key: Any) -> bool:
    """Of a session key's form: 8 to 64 characters of a-z0-9 (what the body rules,
    core/api/bodies.py, take as a session from the head)."""
    return isinstance(key, str) and 8 <= len(key) <= 64 and set(key) <= SESSION_KEY_CHARS


class SessionStore(DatabaseSessionStore):
    def _validate_session_key(self, key: Any) -> bool:
        return is_session_key(key)
