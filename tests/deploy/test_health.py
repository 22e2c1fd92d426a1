"""/healthz says the process is alive; /readyz that the database answers and is migrated."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client

from coordinator.health import readiness


def test_healthz_answers_without_a_database_a_login_or_a_known_host(client: Client) -> None:
    # No django_db mark: touching the database here would raise.
    response = client.get("/healthz", HTTP_HOST="10.0.0.7")
    assert response.status_code == 200
    assert response.json() == {"status": "alive"}


@pytest.mark.django_db
def test_readyz_is_200_when_migrated_with_one_query(client: Client, django_assert_num_queries):
    with django_assert_num_queries(1):
        response = client.get("/readyz", HTTP_HOST="10.0.0.7")
    assert response.status_code == 200, response.content
    assert response.json() == {"status": "ready"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
def test_readyz_is_503_naming_the_pending_migrations() -> None:
    from coordinator.health import migrations_on_disk

    expected = migrations_on_disk() | {("indexer", "9999_not_applied")}
    status, body = readiness(expected)
    assert status == 503
    assert body == {"status": "unavailable", "pending_migrations": ["indexer.9999_not_applied"]}


@pytest.mark.django_db(transaction=True)
def test_readyz_is_503_when_the_database_does_not_answer(client: Client, monkeypatch) -> None:
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "NAME", "test_no_such_database")
    try:
        response = client.get("/readyz")
    finally:
        connection.close()
    assert response.status_code == 503
    assert response.json() == {
        "status": "unavailable",
        "database": "not answering (OperationalError)",
    }


def test_ssl_redirect_and_unknown_hosts_do_not_touch_the_probes(client: Client, settings) -> None:
    settings.SECURE_SSL_REDIRECT = True
    settings.ALLOWED_HOSTS = ["coordinator.example"]
    response = client.get("/healthz", HTTP_HOST="192.0.2.1")
    assert response.status_code == 200
