"""Per node in the status: all-time headers beside the last hour, ranges finished in the
last hour with their headers, and quiet leases apart from live ones (docs/api.md, Status)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from seeding.maintenance import fold_node_totals
from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db


def old_minute(node, group_id, hours_ago, headers):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
            " VALUES (date_trunc('minute', now()) - make_interval(hours => %s), %s, %s, %s, 1)",
            [hours_ago, node.node.id, group_id, headers],
        )


def batch(client, lease, next_id, headers):
    body = {"epoch": lease["epoch"], "next": next_id, "headers": headers}
    response = client.post(f"/api/v1/ranges/{lease['id']}/batch", body)
    assert response.status_code == 200, response.content


def nodes_of(status):
    return {n["name"]: n for n in status["nodes"]}


def test_headers_of_all_time_sit_beside_the_last_hour_and_survive_the_fold(node_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    busy = node_client(name="busy")
    old_minute(busy, rng.group_id, 5, 1000)
    old_minute(busy, rng.group_id, 30, 300)
    lease = busy.lease()  # the lease path may run the fold itself (when due)
    batch(busy, lease, 41, 40)
    node = nodes_of(busy.get("/api/v1/status").json())["busy"]
    assert (node["headers_last_hour"], node["headers_total"]) == (40, 1340)
    fold_node_totals()
    node = nodes_of(busy.get("/api/v1/status").json())["busy"]
    assert (node["headers_last_hour"], node["headers_total"]) == (40, 1340)
    assert fold_node_totals() == 0  # each minute is folded once; this one is too new


def test_ranges_finished_in_the_last_hour_and_their_headers(node_client):
    SeedRangeFactory(start_id=1, end_id=100)
    SeedRangeFactory(start_id=101, end_id=200)
    node = node_client(name="finisher")
    other = node_client(name="other")
    lease = node.lease()
    batch(node, lease, 101, 95)
    assert node.post(
        f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]}
    ).status_code in (200, 204)
    busy = other.lease()
    batch(other, busy, 150, 49)
    status = node.get("/api/v1/status").json()
    nodes = nodes_of(status)
    assert nodes["finisher"]["ranges_finished_last_hour"] == 1
    assert nodes["finisher"]["finished_headers_last_hour"] == 95
    assert nodes["other"]["ranges_finished_last_hour"] == 0
    assert nodes["other"]["finished_headers_last_hour"] == 0
    assert status["finished_last_hour"] == {"ranges": 1, "headers": 95}


def test_quiet_leases_are_counted_apart_from_live_ones(node_client, backdate, settings):
    first = SeedRangeFactory(start_id=1, end_id=100)
    SeedRangeFactory(start_id=101, end_id=200)
    node = node_client(name="half-quiet")
    assert node.lease()["id"] == first.id
    node.lease()
    backdate(first.id, settings.LEASE_TTL_SECONDS + 1)
    row = nodes_of(node.get("/api/v1/status").json())["half-quiet"]
    assert (row["live_leases"], row["quiet_leases"]) == (1, 1)


def test_seed_status_shows_the_new_figures_in_text_and_json(node_client, backdate, settings):
    first = SeedRangeFactory(start_id=1, end_id=100)
    node = node_client(name="shown")
    lease = node.lease()
    batch(node, lease, 101, 77)
    old_minute(node, first.group_id, 3, 1000)
    node.post(f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]})
    status = json.loads(call_command("seed_status", "--json", stdout=StringIO()))
    row = nodes_of(status)["shown"]
    assert (row["headers_total"], row["ranges_finished_last_hour"]) == (1077, 1)
    assert row["quiet_leases"] == 0
    text = call_command("seed_status", stdout=StringIO())
    assert "quiet leases" in text and "headers, all time" in text and "1,077" in text
    assert "Ranges finished in the last hour: 1 (77 headers)" in text


def many_minutes(node, group_id, count):
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
            " SELECT date_trunc('minute', now()) - make_interval(mins => m), %s, %s, 1, 1"
            "   FROM generate_series(0, %s) AS m",
            [node.node.id, group_id, count],
        )
        cursor.execute("ANALYZE header_rollup")


def rollup_scans(sql, params=None):
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + sql, params)
        plan = json.dumps(cursor.fetchone()[0])
    return [s for s in plan.split("{") if '"Relation Name": "header_rollup"' in s]


@pytest.mark.slow
def test_the_status_reads_the_rollup_from_the_fold_mark_not_its_whole_history(node_client):
    """With a day of minutes folded, the status's one rollup scan starts at the last
    hour (an index range), where a subquery's unknown mark had PostgreSQL scan
    every minute ever kept (285 ms at 1,000 nodes, docs/performance.md)."""
    from console.selectors import queries

    rng = SeedRangeFactory(start_id=1, end_id=100)
    busy = node_client(name="busy")
    many_minutes(busy, rng.group_id, 200_000)
    assert fold_node_totals() > 199_000
    mark = queries.fetchone("header_fold_mark", {}).mark
    params = {"ttl": 900, "mark": mark, "totals": True}
    scans = rollup_scans(queries["nodes_status"], params)
    assert scans and all('"Seq Scan"' not in s for s in scans), scans
    node = nodes_of(busy.get("/api/v1/status").json())["busy"]
    assert (node["headers_last_hour"], node["headers_total"]) == (60, 200_001)  # minutes 0..59 ago


server_side_binding = pytest.mark.skipif(
    not connection.settings_dict["OPTIONS"].get("server_side_binding"),
    reason="DB_PREPARE=0: nothing is prepared, and logged SQL keeps its $n placeholders",
)


@pytest.mark.slow
@server_side_binding
def test_the_dashboards_busiest_nodes_read_the_last_hour_only_with_nothing_folded(node_client):
    """The busiest nodes show the last hour: they do not pay for summing every
    minute not yet folded into the all-time totals (357 ms at 1,000 nodes)."""
    from django.test.utils import CaptureQueriesContext

    from console.selectors import busiest_nodes

    rng = SeedRangeFactory(start_id=1, end_id=100)
    busy = node_client(name="busy")
    many_minutes(busy, rng.group_id, 200_000)  # nothing folded: the mark is -infinity
    with CaptureQueriesContext(connection) as captured:
        nodes = busiest_nodes(900, 10)
    assert [(n["name"], n["headers_per_hour"]) for n in nodes] == [("busy", 60)]
    sql = [q["sql"] for q in captured.captured_queries if "header_rollup" in q["sql"]]
    assert len(sql) == 1
    scans = rollup_scans(sql[0])
    assert scans and all('"Seq Scan"' not in s for s in scans), scans


@server_side_binding
def test_the_status_statement_is_planned_each_time_never_prepared(node_client):
    """A prepared nodes_status could keep a generic plan made for an old mark (a
    scan of every minute); it is planned for its values every time."""
    from console.selectors import seed_status

    SeedRangeFactory(start_id=1, end_id=100)
    node_client(name="asked")
    for _ in range(6):  # psycopg prepares a statement run prepare_threshold (2) times
        assert "asked" in nodes_of(seed_status())
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE %s",
            ["%AS unfolded%"],
        )
        assert cursor.fetchone()[0] == 0


def test_a_node_seen_a_fraction_of_a_second_past_the_ttl_is_quiet(node_client):
    """Live or quiet is decided by the database's clock to the microsecond (a
    rounded 'seconds ago' had called a node live up to half a second late)."""
    from console.selectors import busiest_nodes

    node = node_client(name="edge")
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE seed_node SET last_seen_at = now() - make_interval(secs => 900.3)"
            " WHERE id = %s",
            [node.node.id],
        )
    [row] = busiest_nodes(900, 10)
    assert (row["name"], row["state"], row["seen_seconds_ago"]) == (
        "edge",
        "quiet",
        901,
    )  # shown as past the TTL too
