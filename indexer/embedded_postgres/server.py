"""The embedded PostgreSQL a newcomer gets when DATABASE_URL is unset.

The server (the `pgserver` package: real PostgreSQL binaries shipped on PyPI)
is started the first time a connection is opened, never at import time, so a
process that needs no database never starts one. Its data lives under
`var/pg` in the checkout. The server stays up while any process that asked
for it runs, and stops when the last one exits.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_server: Any = None
_created: set[str] = set()


def _start(data_dir: Path) -> Any:
    # pgserver keeps its inter-process lock in the user's runtime dir; give it
    # one explicitly rather than let platformdirs warn and guess.
    runtime = os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/runtime-{os.getuid()}")  # noqa: S108
    Path(runtime).mkdir(mode=0o700, parents=True, exist_ok=True)
    Path(runtime).chmod(0o700)
    import pgserver  # imported late: only processes that connect pay for it

    data_dir.mkdir(parents=True, exist_ok=True)
    logger.info("starting embedded PostgreSQL in %s", data_dir)
    return pgserver.get_server(data_dir, cleanup_mode="stop")


# Server settings the embedded cluster runs with. A lease queue is only as
# fast as its vacuum: autovacuum wakes every 5 s instead of every minute so
# the claim index never carries more than a few seconds of dead entries
# (docs/performance.md says what to set on a production server).
SERVER_SETTINGS = {
    "autovacuum_naptime": ("5", "5s"),
    "autovacuum_vacuum_cost_limit": ("2000", "2000"),
}


def _tune(conn: Any) -> None:
    from psycopg import sql

    from indexer.sql import queries

    changed = False
    for name, (setting, value) in SERVER_SETTINGS.items():
        row = conn.execute(queries["server_setting"], {"name": name}).fetchone()
        if row is not None and row.setting != setting:
            statement = sql.SQL(queries["set_server_setting"])
            conn.execute(statement.format(name=sql.Identifier(name), value=sql.Literal(value)))
            changed = True
    if changed:
        conn.execute(queries["reload_server_settings"])


def _ensure_database(socket_dir: str, name: str) -> None:
    import psycopg
    from psycopg import sql
    from psycopg.rows import namedtuple_row

    from indexer.sql import queries

    with psycopg.connect(
        host=socket_dir,
        user="postgres",
        dbname="postgres",
        autocommit=True,
        row_factory=namedtuple_row,
    ) as conn:
        _tune(conn)
        exists = conn.execute(queries["database_exists"], {"name": name}).fetchone()
        if not exists:
            logger.info("creating database %s", name)
            conn.execute(sql.SQL(queries["create_database"]).format(name=sql.Identifier(name)))


def ensure_started(data_dir: Path, database: str | None = None) -> str:
    """Start (or join) the embedded server, create `database`, return the socket dir."""
    global _server
    with _lock:
        if _server is None:
            _server = _start(data_dir)
        socket_dir = str(_server.get_postmaster_info().socket_dir)
        if database and database not in _created:
            _ensure_database(socket_dir, database)
            _created.add(database)
        return socket_dir
