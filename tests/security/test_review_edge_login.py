"""Review of the HTTP edge: login limits' remaining holes (reproductions)."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


def through_proxy(client_address: str) -> dict[str, str]:
    return {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": client_address}


def attempt(name: str, password: str, **meta: str) -> int:
    return Client().post(LOGIN, {"username": name, "password": password}, **meta).status_code


def test_a_nul_in_the_user_name_is_a_4xx_not_a_500():
    client = Client(raise_request_exception=False)
    response = client.post(LOGIN, {"username": "a\x00b", "password": "x"}, REMOTE_ADDR="10.2.2.2")
    assert response.status_code < 500


@override_settings(
    LOGIN_FAILURES_PER_USER=10, LOGIN_FAILURES_PER_USER_TOTAL=100, LOGIN_FAILURES_PER_ADDRESS=50
)
def test_an_operator_who_mistypes_once_is_not_locked_out_by_strangers(django_user_model):
    django_user_model.objects.create_user("ops", password="right-password", is_staff=True)
    # A stranger with ten addresses (or ten /64s of one IPv6 /48), ten guesses each,
    # every one under each address's own limits.
    for n in range(10):
        for _ in range(10):
            assert attempt("ops", "guess", **through_proxy(f"2001:db8:66:{n}::1")) == 200
    # The operator, at an address of their own, mistypes once, then types it right.
    operator = through_proxy("198.51.100.2")
    assert attempt("ops", "typo", **operator) == 200
    assert attempt("ops", "right-password", **operator) == 302
