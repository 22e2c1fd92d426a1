"""The fault suite shares the session's INN2 server; `--soak MINUTES` is declared in tests/conftest.py."""

from __future__ import annotations

from tests.support.fixtures import inn_server  # noqa: F401
