"""Set up Django for a benchmark on a database of its own.

With DATABASE_URL unset the embedded server is used, with a database named
after the benchmark, so benchmarks never touch the development data. The
database is migrated before use. A bench that reads PostgreSQL's CPU from
/proc asks for a cluster of its own (`private=True`): see `private_cluster`.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(database: str, private: bool = False) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coordinator.settings")
    embedded = not os.environ.get("DATABASE_URL")
    if embedded:
        os.environ["EMBEDDED_DATABASE_NAME"] = database
        if private:
            private_cluster(database)
    import django

    django.setup()
    if embedded and private:
        load_statement_statistics()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def private_cluster(name: str) -> Path:
    """Run the embedded server (core/embedded_postgres, which makes the cluster with
    initdb on first connect) in a directory of this process's own under var/, for
    this process and the servers it starts (they inherit EMBEDDED_DATABASE_DIR), and
    stop and remove it when this process exits. PostgreSQL's process tree is then the
    bench's alone: nobody else's tests or benches run on it, so the CPU read from
    /proc under its postmaster is the bench's calls' (and the background work they
    cause: WAL, autovacuum, checkpoints), and nothing else's."""
    (ROOT / "var").mkdir(exist_ok=True)
    directory = Path(tempfile.mkdtemp(prefix=f"{name}-pg-", dir=ROOT / "var"))
    os.environ["EMBEDDED_DATABASE_DIR"] = str(directory)
    # Registered before the server's own exit handler (made on first connect), so it
    # runs after it: that one stops the server when this is the last process using it.
    atexit.register(_discard_cluster, directory)
    return directory


def _discard_cluster(directory: Path) -> None:
    from core.embedded_postgres.server import control

    if (directory / "postmaster.pid").exists():  # still up (a restarted server, a stray)
        try:
            control(directory, ["-w", "-m", "fast", "stop"])
        except (OSError, subprocess.SubprocessError) as error:  # exiting: say so, go on
            print(f"stopping the bench's PostgreSQL in {directory}: {error}", file=sys.stderr)
    shutil.rmtree(directory, ignore_errors=True)


def load_statement_statistics() -> None:
    """pg_stat_statements loaded in the private cluster (it needs a restart), timing
    planning as well as execution and the nested statements too: the bench's
    statements, by time, are then printed at its end."""
    from django.db import connection
    from psycopg import sql as psql

    from core.embedded_postgres.server import control
    from core.sql import queries

    directory = Path(connection.settings_dict["EMBEDDED_DIR"])
    # Planning is timed too, and the statements that triggers and functions run are
    # kept beside the top-level ones (`toplevel` tells them apart).
    settings = {
        "shared_preload_libraries": "pg_stat_statements",
        "pg_stat_statements.track_planning": "on",
        "pg_stat_statements.track": "all",
    }
    with connection.cursor() as cursor:
        for name, value in settings.items():
            statement = psql.SQL(queries["set_server_setting"]).format(
                name=psql.Identifier(name), value=psql.Literal(value)
            )
            cursor.execute(statement.as_string(cursor.connection))
    connection.close()
    # The restart keeps the options the server was started with (its socket directory).
    control(directory, ["-w", "-m", "fast", "-l", str(directory / "log"), "restart"])


def use_database(name: str) -> None:
    """Point Django's connection at another database of the same server
    (created on first connect when embedded), migrated before use."""
    from django.core.management import call_command
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name
    call_command("migrate", verbosity=0)


def drop_database(name: str) -> None:
    """Drop a bench's database (the connection must point elsewhere or be closed)."""
    import psycopg
    from django.db import connection

    from core.embedded_postgres import server

    connection.close()
    connection.settings_dict["NAME"] = "postgres"  # connecting must not create it again
    params = connection.get_connection_params()
    keep = {"host", "port", "user", "password"}
    with psycopg.connect(
        **{k: v for k, v in params.items() if k in keep}, dbname="postgres", autocommit=True
    ) as conn:
        conn.execute(
            psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                psycopg.sql.Identifier(name)
            )
        )
    server._created.discard(name)
