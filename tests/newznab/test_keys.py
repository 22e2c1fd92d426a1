"""API keys: issued, hashed, bad, disabled, rotated, rate-limited, counted per day."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client

from newznab import services
from newznab.models import ApiKey, ApiKeyDay
from tests.support.newznab import call, error_code

pytestmark = pytest.mark.django_db


def test_a_key_is_stored_only_as_its_digest(api_key: Any) -> None:
    stored = ApiKey.objects.get(pk=api_key.id)
    assert len(api_key.key) == 32
    assert api_key.key not in stored.key_hash
    assert not ApiKeyDay.objects.exists()


@pytest.mark.parametrize("key", ["", "x" * 32, "short", "0" * 200])
def test_a_missing_or_unknown_key_is_error_100(client: Client, key: str) -> None:
    assert error_code(call(client, t="search", q="x", apikey=key)) == 100


def test_the_key_may_come_in_a_header(client: Client, api_key: Any) -> None:
    response = client.get("/api", {"t": "search", "q": "x"}, HTTP_X_API_KEY=api_key.key)
    assert response.status_code == 200
    assert b"<error" not in response.content


def test_a_disabled_key_is_error_101_until_enabled(client: Client, api_key: Any) -> None:
    services.set_api_keys_disabled([api_key.id], True)
    assert error_code(call(client, t="search", q="x", apikey=api_key.key)) == 101
    services.set_api_keys_disabled([api_key.id], False)
    assert b"<error" not in call(client, t="search", q="x", apikey=api_key.key).content


def test_a_rotated_key_stops_working_and_the_new_one_works(client: Client, api_key: Any) -> None:
    [(_, new_key)] = services.rotate_api_keys([api_key.id])
    assert error_code(call(client, t="search", q="x", apikey=api_key.key)) == 100
    assert b"<error" not in call(client, t="search", q="x", apikey=new_key).content


def test_beyond_the_limit_a_key_gets_429_with_retry_after(client: Client) -> None:
    api_key, key = services.issue_api_key("hydra", rate_limit=3)
    for _ in range(3):
        assert call(client, t="search", q="x", apikey=key).status_code == 200
    response = call(client, t="search", q="x", apikey=key)
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    assert error_code(response) == 500
    day = ApiKeyDay.objects.get(key=api_key)
    assert (day.requests, day.limited) == (4, 1)


def test_the_limit_resets_in_the_next_minute(client: Client) -> None:
    _, key = services.issue_api_key("hydra", rate_limit=1)
    assert call(client, t="search", q="x", apikey=key).status_code == 200
    assert call(client, t="search", q="x", apikey=key).status_code == 429
    with connection.cursor() as cursor:  # the window started a minute ago
        cursor.execute(
            "UPDATE newznab_rate_window SET window_start = window_start - interval '1 minute'"
        )
    assert call(client, t="search", q="x", apikey=key).status_code == 200


def test_requests_are_counted_per_key_and_day(client: Client, api_key: Any) -> None:
    for _ in range(3):
        call(client, t="search", q="x", apikey=api_key.key)
    call(client, t="caps")  # caps needs no key and counts nothing
    assert ApiKeyDay.objects.get(key_id=api_key.id).requests == 3


def test_issuing_a_taken_name_is_refused(api_key: Any) -> None:
    from core.errors import Invalid

    with pytest.raises(Invalid):
        services.issue_api_key("sonarr")


def test_the_served_access_log_leaves_query_strings_out() -> None:
    from core.management.commands.serve import ACCESS_LOG_FORMAT

    assert "%(U)s" in ACCESS_LOG_FORMAT
    assert not any(field in ACCESS_LOG_FORMAT for field in ("%(r)s", "%(q)s", "%(f)s"))


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_concurrent_calls_never_exceed_the_limit() -> None:
    """The window is one row in PostgreSQL: calls from many workers (or hosts) at once
    are counted one by one, so exactly the limit gets through."""
    from newznab.errors import RateLimited
    from tests.support.threads import run_threads

    _, key = services.issue_api_key("hydra", rate_limit=5)

    def call_once() -> str:
        try:
            services.authenticate(key)
        except RateLimited:
            return "limited"
        return "ok"

    outcomes = run_threads([call_once] * 12)
    assert sorted(outcomes) == ["limited"] * 7 + ["ok"] * 5
