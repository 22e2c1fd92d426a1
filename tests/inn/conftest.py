"""The INN2 integration suite uses the shared INN fixtures."""

from __future__ import annotations

from tests.support.fixtures import inn_reader, inn_server  # noqa: F401
