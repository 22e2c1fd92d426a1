"""The hot path's query budget, and what nodes see when the database is gone."""

from __future__ import annotations

import pytest
from django.db import connection

from seeding import maintenance
from tests.support.factories import SeedRangeFactory

BATCH = {"next": 1500, "headers": 500, "files": [], "fragments": []}


@pytest.mark.django_db
def test_lease_batch_and_heartbeat_pin_their_query_count(
    node_client, django_assert_num_queries, settings, tmp_path
):
    settings.SNAPSHOT_DIR = tmp_path
    SeedRangeFactory(start_id=1000, end_id=5999)
    node = node_client()
    node.post("/api/v1/ranges/lease")  # first call writes last_seen_at
    SeedRangeFactory(start_id=6000, end_id=9999)
    maintenance.run_all()  # the periodic upkeep has just run in this process
    # The token was looked up on the first call and is kept (TOKEN_CACHE_SECONDS):
    # the lease gate (rate and cap) and the claim in one statement (1): no lease lock
    # for ranges (WorkTable.takes_turns).
    with django_assert_num_queries(1):
        lease = node.lease()
    # Savepoint + the batch statement + release savepoint.
    with django_assert_num_queries(3):
        response = node.post(
            f"/api/v1/ranges/{lease['id']}/batch", {**BATCH, "epoch": lease["epoch"]}
        )
    assert response.status_code == 200
    with django_assert_num_queries(1):
        response = node.post(f"/api/v1/ranges/{lease['id']}/heartbeat", {"epoch": lease["epoch"]})
    assert response.status_code == 204


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_an_unreachable_database_is_a_503_and_the_node_retries(node_client):
    node = node_client()
    connection.close()
    saved = dict(connection.settings_dict)
    connection.settings_dict["PORT"] = "1"  # nothing listens there
    try:
        response = node.post("/api/v1/ranges/lease")
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert response["Retry-After"]
    assert node.post("/api/v1/ranges/lease").status_code == 200


@pytest.mark.parametrize(
    ("path", "extra", "status", "code"),
    [
        # Django refuses the Host before any view runs (an HTML 400 without the net).
        ("/api/v1/status", {"HTTP_HOST": "evil.example"}, 400, "invalid"),
        ("/api/v1/no-such-endpoint", {}, 404, "not_found"),
    ],
)
def test_errors_raised_before_any_view_still_answer_json(client, path, extra, status, code):
    response = client.get(path, **extra)
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["error"] == code and body["detail"]


def test_pages_outside_the_api_keep_their_own_error_pages(client):
    response = client.get("/admin/no-such-page/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert "json" not in response["Content-Type"]
