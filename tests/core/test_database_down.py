"""What every client sees while the database does not answer: a 503 with Retry-After, never a 500.

The node API's answers are tested in tests/seeding/test_resilience.py; here
the routes beside it: the newznab API and feed, and /metrics. The fault suite stops a real server under load (tests/chaos/test_postgres_restart.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection
from django.test import Client

from newznab import services

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def database_down() -> Iterator[None]:
    """Every new connection fails as it would with the server stopped (nothing listens)."""
    connection.close()
    saved = dict(connection.settings_dict)
    connection.settings_dict["PORT"] = "1"
    try:
        yield
    finally:
        connection.close()
        connection.settings_dict.clear()
        connection.settings_dict.update(saved)


@pytest.fixture
def api_key() -> str:
    return services.issue_api_key("sonarr")[1]


@pytest.mark.slow
@pytest.mark.parametrize(
    "params",
    [
        {"t": "search", "q": "linux"},
        {"t": "search", "q": "linux", "o": "json"},
        {"t": "tvsearch", "q": "linux"},
    ],
)
def test_the_newznab_api_answers_503_with_retry_after(
    client: Client, api_key: str, database_down: None, params: dict[str, str]
) -> None:
    response = client.get("/api", {**params, "apikey": api_key})
    assert response.status_code == 503
    assert response["Retry-After"]
    assert b"retry" in response.content.lower()


def test_the_newznab_feed_answers_503_with_retry_after(
    client: Client, api_key: str, database_down: None
) -> None:
    response = client.get("/rss", {"t": "0", "apikey": api_key})
    assert response.status_code == 503
    assert response["Retry-After"]


def test_metrics_answer_503_with_retry_after(client: Client, database_down: None) -> None:
    response = client.get("/metrics")
    assert response.status_code == 503
    assert response["Retry-After"]
