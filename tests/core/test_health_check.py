"""The kept connection's health check (core/postgres/base.py): no round trip while
the server has said nothing, Django's `SELECT 1` (and a new connection) once it has."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.db import connection
from psycopg import Connection

from core.postgres.base import has_input
from tests.support.sessions import side_session

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What Django's connection sends through psycopg's cursors from now on."""
    connection.ensure_connection()
    queries: list[str] = []
    cursor_class = connection.connection.cursor_factory
    execute = cursor_class.execute

    def counted(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        queries.append(str(query))
        return execute(self, query, *args, **kwargs)

    monkeypatch.setattr(cursor_class, "execute", counted)
    return queries


def idle_connection() -> Connection[Any]:
    connection.ensure_connection()
    conn = connection.connection
    assert conn is not None
    return conn


def test_an_idle_connection_the_server_left_alone_is_usable_without_a_query(
    sent: list[str],
) -> None:
    idle_connection()
    assert connection.is_usable()
    assert sent == []


def test_a_terminated_connection_is_found_and_replaced_before_the_next_query() -> None:
    conn = idle_connection()
    pid = conn.info.backend_pid
    with side_session() as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 10
    while not has_input(conn.pgconn.socket) and time.monotonic() < deadline:
        time.sleep(0.01)  # the server's goodbye on its way
    assert not connection.is_usable()
    # A request's start: Django drops the connection the check refused, then connects again.
    connection.health_check_done = False
    connection.close_if_health_check_failed()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid


def test_a_connection_inside_a_transaction_is_asked_as_django_asks(sent: list[str]) -> None:
    conn = idle_connection()
    conn.execute("BEGIN")
    try:
        assert connection.is_usable()
    finally:
        conn.execute("ROLLBACK")
    assert sent == ["BEGIN", "SELECT 1", "ROLLBACK"]  # the check asked the server
