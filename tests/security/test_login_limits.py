"""The admin login's limits (console/login_limits.py): names keyed as Django
authenticates them, addresses as the client's behind a trusted proxy, and no
anonymous source able to lock an operator out."""

from __future__ import annotations

import secrets

import pytest
from django.test import Client, override_settings

from console.login_limits import SHARED_LOCK_OWN_FAILURES
from core import throttle

pytestmark = pytest.mark.django_db

LOGIN = "/admin/login/"


def through_proxy(client_address: str) -> dict[str, str]:
    """A request as nginx on the same host forwards it (TRUSTED_PROXIES: loopback)."""
    return {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": client_address}


def attempt(name: str, password: str, **meta: str) -> int:
    """One login from a browser of its own (no session carried over)."""
    return Client().post(LOGIN, {"username": name, "password": password}, **meta).status_code


@pytest.fixture
def operator(django_user_model):
    django_user_model.objects.create_user("sec-nfkc", password="right-password", is_staff=True)
    return "sec-nfkc"


@override_settings(LOGIN_FAILURES_PER_USER=3)
@pytest.mark.parametrize(
    "variant",
    [
        "sec\uff0dnfkc",  # a fullwidth hyphen: NFKC makes it '-'
        "\uff53\uff45\uff43-nfkc",  # fullwidth letters
        " " * 200 + "sec-nfkc",  # Django strips the spaces; the key was cut to 150 first
        "sec-nfkc\t",
    ],
)
def test_a_variant_of_a_locked_name_that_django_logs_in_is_locked_too(operator, variant):
    for _ in range(3):
        assert attempt(operator, "guess", REMOTE_ADDR="10.1.1.1") == 200
    assert attempt(variant, "right-password", REMOTE_ADDR="10.1.1.1") == 429


def test_the_variants_do_log_in_when_nothing_is_locked(operator):
    # The point of the test above: Django authenticates these as the operator.
    assert attempt("sec\uff0dnfkc", "right-password", REMOTE_ADDR="10.1.1.1") == 302
    assert attempt(" " * 200 + "sec-nfkc", "right-password", REMOTE_ADDR="10.1.1.1") == 302


@pytest.mark.slow
@override_settings(LOGIN_FAILURES_PER_ADDRESS=50)
def test_random_names_through_the_proxy_lock_only_the_attackers_address(operator):
    attacker = through_proxy("203.0.113.66")
    for _ in range(50):
        assert attempt(f"nobody-{secrets.token_hex(4)}", "x", **attacker) == 200
    assert attempt("nobody-else", "x", **attacker) == 429
    assert attempt(operator, "right-password", **attacker) == 429
    # Every client reaches the coordinator from nginx's 127.0.0.1; the operator is elsewhere.
    assert attempt(operator, "right-password", **through_proxy("198.51.100.2")) == 302


@override_settings(LOGIN_FAILURES_PER_ADDRESS=3)
def test_a_client_writing_x_forwarded_for_itself_is_still_keyed_by_its_own_address():
    for n in range(3):
        forged = {"REMOTE_ADDR": "203.0.113.66", "HTTP_X_FORWARDED_FOR": f"10.0.0.{n}"}
        assert attempt(f"name-{n}", "x", **forged) == 200
    assert (
        attempt("name-x", "x", REMOTE_ADDR="203.0.113.66", HTTP_X_FORWARDED_FOR="10.9.9.9") == 429
    )
    # Behind the proxy, what the client prepended is not read either.
    for n in range(3):
        assert attempt(f"other-{n}", "x", **through_proxy(f"10.0.0.{n}, 203.0.113.77")) == 200
    assert attempt("other-x", "x", **through_proxy("10.5.5.5, 203.0.113.77")) == 429


@override_settings(LOGIN_FAILURES_PER_USER=10, LOGIN_FAILURES_PER_USER_TOTAL=1000)
def test_guessing_one_account_locks_that_name_from_the_guessing_address_only(operator):
    attacker = through_proxy("203.0.113.66")
    for _ in range(10):
        assert attempt(operator, "guess", **attacker) == 200
    assert attempt(operator, "right-password", **attacker) == 429
    assert attempt(operator, "right-password", **through_proxy("198.51.100.2")) == 302


@override_settings(
    LOGIN_FAILURES_PER_USER=10, LOGIN_FAILURES_PER_USER_TOTAL=6, LOGIN_FAILURES_PER_ADDRESS=50
)
def test_past_the_total_per_name_only_an_address_with_five_failures_of_its_own_is_refused(
    operator,
):
    for n in range(6):  # six addresses, one guess each: under each address's own limits
        assert attempt(operator, "guess", **through_proxy(f"203.0.113.{n}")) == 200
    # A stranger's address gets five guesses on the name past the total, then 429 ...
    stranger = through_proxy("203.0.113.100")
    for _ in range(SHARED_LOCK_OWN_FAILURES):
        assert attempt(operator, "guess", **stranger) == 200
    assert attempt(operator, "right-password", **stranger) == 429
    # ... failures on other names do not count towards it ...
    elsewhere = through_proxy("203.0.113.200")
    for n in range(SHARED_LOCK_OWN_FAILURES):
        assert attempt(f"someone-else-{n}", "x", **elsewhere) == 200
    assert attempt(operator, "guess", **elsewhere) == 200
    # ... and an operator who mistyped up to four times logs in.
    operator_address = through_proxy("198.51.100.2")
    for _ in range(SHARED_LOCK_OWN_FAILURES - 1):
        assert attempt(operator, "typo", **operator_address) == 200
    assert attempt(operator, "right-password", **operator_address) == 302


@override_settings(
    LOGIN_FAILURES_PER_USER=10, LOGIN_FAILURES_PER_USER_TOTAL=100, LOGIN_FAILURES_PER_ADDRESS=50
)
def test_an_operator_who_mistypes_once_is_not_locked_out_by_strangers(operator):
    # A stranger with ten addresses (or ten /64s of one IPv6 /48), ten guesses each,
    # every one under each address's own limits.
    for n in range(10):
        for _ in range(10):
            assert attempt(operator, "guess", **through_proxy(f"2001:db8:66:{n}::1")) == 200
    # The operator, at an address of their own, mistypes once, then types it right.
    operator_address = through_proxy("198.51.100.2")
    assert attempt(operator, "typo", **operator_address) == 200
    assert attempt(operator, "right-password", **operator_address) == 302


@pytest.mark.parametrize("name", ["a\x00b", "\x00", "sec-nfkc\x00"])
def test_a_nul_in_the_user_name_is_refused_by_the_form_and_counted(operator, name):
    client = Client(raise_request_exception=False)
    response = client.post(LOGIN, {"username": name, "password": "x"}, REMOTE_ADDR="10.2.2.2")
    assert response.status_code == 200  # the form again, with Django's reason
    assert "Null characters are not allowed." in response.content.decode()
    assert throttle.peek("login-addr:10.2.2.2", 900).hits == 1


@override_settings(LOGIN_FAILURES_PER_ADDRESS=3)
def test_an_ipv6_client_is_keyed_by_its_64():
    for n in range(3):
        assert attempt(f"name-{n}", "x", **through_proxy(f"2001:db8:1:2::{n + 1}")) == 200
    assert attempt("name-x", "x", **through_proxy("2001:db8:1:2:ffff::9")) == 429
    assert attempt("name-x", "x", **through_proxy("2001:db8:1:3::1")) == 200


@override_settings(LOGIN_FAILURES_PER_ADDRESS=2)
def test_the_refusal_says_what_to_do(operator):
    for name in ("a", "b"):
        attempt(name, "x", REMOTE_ADDR="10.1.1.1")
    response = Client().post(LOGIN, {"username": "c", "password": "x"}, REMOTE_ADDR="10.1.1.1")
    assert response.status_code == 429
    text = response.content.decode()
    assert "Too many failed logins from your address (2 per 900 s): wait" in text
    assert 1 <= int(response["Retry-After"]) <= 900
