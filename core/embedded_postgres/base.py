"""PostgreSQL backend whose server is started lazily (see `server.py`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.postgres import base

from .server import ensure_started

# Databases Django creates itself (test databases) need no help; the main
# one is created on first connect so `manage.py migrate` just works.
_MAINTENANCE = {"postgres", "template0", "template1"}


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict[str, Any]:
        params = super().get_connection_params()
        name = params.get("dbname")
        create = (
            name if name and name not in _MAINTENANCE and not name.startswith("test_") else None
        )
        params["host"] = ensure_started(Path(self.settings_dict["EMBEDDED_DIR"]), create)
        params.setdefault("user", "postgres")
        return params
