"""A request in flight when the database switches fails cleanly, and the next one reconnects.

Every fault is a real one on the test's PostgreSQL, never a mock: the request's
backend terminated while it waits on a lock (what a primary shut down under a
session answers, 57P01), a session that turned read-only (a demoted primary:
25006), nothing listening (a member down). The test client keeps one
connection across requests and never health-checks it, so a next request that
succeeds shows the failed one dropped its connection (core/database_faults.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.conf import settings
from django.db import connection
from django.test import Client
from psycopg import sql

from core.database_faults import EXIT_TEMPFAIL, database_unavailable
from newznab import services
from tests.support.factories import SeedRangeFactory
from tests.support.sessions import side_session

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def terminated_while_waiting(table: str) -> Iterator[list[int]]:
    """Hold `table` locked; once Django's session waits on it, terminate that session.

    Yields the list the terminated pid is put in (empty if it never waited)."""
    connection.ensure_connection()
    pid = connection.connection.info.backend_pid
    killed: list[int] = []
    with side_session() as locker, side_session() as watcher:
        locker.autocommit = False
        locker.execute(
            sql.SQL("LOCK TABLE {} IN ACCESS EXCLUSIVE MODE").format(sql.Identifier(table))
        )

        def terminate_once_waiting() -> None:
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                row = watcher.execute(
                    "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid]
                ).fetchone()
                if row is not None and row[0] == "Lock":
                    watcher.execute("SELECT pg_terminate_backend(%s)", [pid])
                    killed.append(pid)
                    return
                time.sleep(0.02)

        killer = threading.Thread(target=terminate_once_waiting)
        killer.start()
        try:
            yield killed
        finally:
            killer.join()
            locker.rollback()


def read_only_session() -> None:
    """Django's session turns read-only, as one on a primary that was just demoted."""
    with connection.cursor() as cursor:
        cursor.execute("SET SESSION default_transaction_read_only = on")


def test_a_node_call_whose_backend_is_terminated_mid_request_gets_503_then_reconnects(
    node_client: Callable[..., Any],
) -> None:
    node = node_client()
    SeedRangeFactory()
    with terminated_while_waiting("seed_node") as killed:
        response = node.post("/api/v1/ranges/lease")
    assert killed, "the request never waited on the lock"
    assert response.status_code == 503, response.content
    assert response.json()["error"] == "unavailable"
    assert response["Retry-After"] == "5"
    assert "switching" in response.json()["detail"]
    assert node.post("/api/v1/ranges/lease").status_code == 200


def test_a_node_call_on_a_demoted_primary_gets_503_and_the_next_call_reconnects(
    node_client: Callable[..., Any],
) -> None:
    node = node_client()
    SeedRangeFactory()
    read_only_session()
    response = node.post("/api/v1/ranges/lease")
    assert response.status_code == 503, response.content
    assert response["Retry-After"]
    lease = node.post("/api/v1/ranges/lease")
    assert lease.status_code == 200 and lease.json()["lease"] is not None


@pytest.mark.parametrize("as_json", [False, True])
def test_a_newznab_search_on_a_demoted_primary_is_error_900_with_503(
    client: Client, as_json: bool
) -> None:
    key = services.issue_api_key("sonarr")[1]
    read_only_session()
    params = {"t": "search", "q": "linux", "apikey": key, **({"o": "json"} if as_json else {})}
    response = client.get("/api", params)
    assert response.status_code == 503
    assert response["Retry-After"]
    assert b"900" in response.content
    assert client.get("/api", params).status_code == 200


def test_an_admin_page_while_the_database_switches_says_so_with_503(admin_user: Any) -> None:
    # As a server would: the exception is answered, not raised into the test.
    admin_client = Client(raise_request_exception=False)
    admin_client.force_login(admin_user)
    admin_client.get("/admin/dashboard/")  # the session's connection is open
    with terminated_while_waiting("django_session") as killed:
        response = admin_client.get("/admin/dashboard/")
    assert killed, "the request never waited on the lock"
    assert response.status_code == 503
    assert response["Retry-After"]
    text = response.content.decode()
    assert "The database is switching" in text and "Retry in a few seconds" in text
    assert "SQLSTATE 57P01" in text
    assert admin_client.get("/admin/dashboard/").status_code == 200


def test_only_server_going_away_errors_count_as_switching() -> None:
    with side_session() as session:
        session.execute("SET SESSION default_transaction_read_only = on")
        for statement, expected in [
            ("CREATE TABLE t (x int)", True),  # 25006: a standby's answer
            ("SELECT 1/0", False),  # 22012: the query's own fault
            ("SELECT * FROM no_such_table", False),  # 42P01
        ]:
            try:
                session.execute(statement)
            except psycopg.Error as exc:
                assert database_unavailable(exc) is expected, (statement, exc.sqlstate)
            else:
                pytest.fail(statement)
    closed = side_session()
    closed.close()
    with pytest.raises(psycopg.OperationalError) as lost:
        closed.execute("SELECT 1")
    assert database_unavailable(lost.value)


# --- manage.py ----------------------------------------------------------------------


def manage(*args: str, database_url: str) -> subprocess.CompletedProcess[str]:
    params = connection.get_connection_params()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "PGHOST": str(params["host"]),
        "PGPORT": str(params.get("port") or 5432),
        "SECRET_KEY": "test-failover-key",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        capture_output=True, text=True, timeout=120, env=env, cwd=ROOT,
    )  # fmt: skip


def stderr_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in done.stderr.splitlines() if line.startswith("manage.py:")]


@pytest.mark.slow
def test_a_command_with_no_member_answering_prints_one_sentence_and_exits_75() -> None:
    url = "postgres://app:pw-secret-9@127.0.0.1:1,127.0.0.1:2/x?connect_timeout=2"
    done = manage("seed_status", database_url=url)
    assert done.returncode == EXIT_TEMPFAIL == 75
    (line,) = stderr_lines(done)
    assert "127.0.0.1:1, 127.0.0.1:2/x" in line and "run it again in a few seconds" in line
    assert "Traceback" not in done.stderr and "connection to server" not in done.stderr
    assert "pw-secret-9" not in done.stderr


@pytest.mark.slow
def test_a_command_that_writes_on_a_demoted_primary_exits_75() -> None:
    name = settings.DATABASES["default"]["NAME"]
    user = connection.get_connection_params().get("user", "postgres")
    url = f"postgres://{user}@/{name}?options=-c%20default_transaction_read_only%3Don"
    done = manage("issue_token", "read-only-node", database_url=url)
    assert done.returncode == 75, done.stderr
    (line,) = stderr_lines(done)
    assert "the server is read-only (a standby), SQLSTATE 25006" in line
