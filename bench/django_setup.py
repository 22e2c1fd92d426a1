"""Set up Django for a benchmark on a database of its own.

With DATABASE_URL unset the embedded server is used, with a database named
after the benchmark, so benchmarks never touch the development data. The
database is migrated before use.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(database: str) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "coordinator.settings")
    if not os.environ.get("DATABASE_URL"):
        os.environ["EMBEDDED_DATABASE_NAME"] = database
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


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
