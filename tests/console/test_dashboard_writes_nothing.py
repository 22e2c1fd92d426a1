"""The dashboard is a GET: it changes no row, and its chart is right before any fold."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from seeding import maintenance
from tests.support.factories import GroupFactory, NodeFactory

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/dashboard/"
WRITES = ("INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE")


def rollup_tables() -> tuple[list[Any], list[Any]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM header_rollup ORDER BY bucket, node_id, group_id")
        minutes = cursor.fetchall()
        cursor.execute("SELECT * FROM header_rollup_hour ORDER BY hour")
        hours = cursor.fetchall()
    return minutes, hours


def minute(node_id: int, group_id: int, hours_ago: int, at_minute: int, headers: int) -> Any:
    """A rollup minute `hours_ago` hours back; returns the start of its hour."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
            " VALUES (date_trunc('hour', now()) - make_interval(hours => %s)"
            "         + make_interval(mins => %s), %s, %s, %s, 1)"
            " RETURNING date_trunc('hour', bucket)",
            [hours_ago, at_minute, node_id, group_id, headers],
        )
        return cursor.fetchone()[0]


def test_the_dashboard_changes_no_row_and_charts_unfolded_hours_live(admin_client):
    node, group = NodeFactory(), GroupFactory()
    finished = minute(node.id, group.id, 3, 10, 300)
    minute(node.id, group.id, 3, 40, 45)  # a finished hour no upkeep has folded yet
    current = minute(node.id, group.id, 0, 0, 7)
    before = rollup_tables()

    with CaptureQueriesContext(connection) as queries:
        response = admin_client.get(DASHBOARD)

    assert response.status_code == 200
    assert rollup_tables() == before
    writes = [
        q["sql"] for q in queries.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)
    ]
    assert writes == []
    hourly = dict(response.context["data"].hourly)
    assert (hourly[finished], hourly[current]) == (345, 7)

    # Folded by the upkeep, the chart reads the same from header_rollup_hour.
    assert maintenance.fold_rollup_hours() > 0
    assert dict(admin_client.get(DASHBOARD).context["data"].hourly) == hourly
