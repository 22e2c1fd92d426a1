"""The admin login's limits on failed attempts, kept in PostgreSQL (core.throttle).

Three buckets, each counting failures in LOGIN_WINDOW_SECONDS:

- the client's address (`login-addr:`): LOGIN_FAILURES_PER_ADDRESS, past which
  every login from it is refused. One source can try only so many names.
- the user name from that address (`login-user-addr:`): LOGIN_FAILURES_PER_USER,
  past which that name is refused from that address only. A source guessing one
  account locks no one else out.
- the user name from everywhere (`login-user:`): LOGIN_FAILURES_PER_USER_TOTAL,
  past which that name is refused from every address that has itself failed
  on that name at least SHARED_LOCK_OWN_FAILURES (5) times in the window.
  Guessing one account from many addresses then costs a fresh address per
  five guesses, while strangers' failures never hold back an address with
  fewer failures of its own on the name: an operator who mistypes a few times
  during such an attack still logs in.

Names are keyed as Django authenticates them (the login form's username field:
stripped, NFKC-normalised), then case-folded, so `sec\uff0dnfkc` (a fullwidth hyphen)
counts against `sec-nfkc`. A NUL, which no user name holds and PostgreSQL text
cannot, is keyed as U+FFFD (the form then refuses the name). Addresses are the
client's (core/client_address.py); an IPv6 client is keyed by its /64, the
block one subscriber holds.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.http import HttpRequest

from core import throttle
from core.client_address import client_address, parse_address

NAME_KEY_LENGTH = 150  # Django's user names are at most 150 characters
# An address's own failures on a name before the name's total can hold it back:
# well above a few typos, so strangers cannot lock out an operator who mistypes.
SHARED_LOCK_OWN_FAILURES = 5


def storable(text: str) -> str:
    """`text` as a bucket key PostgreSQL can hold: a NUL becomes U+FFFD."""
    return text.replace("\x00", "\ufffd")


def login_name(raw: str) -> str:
    """The name a login attempt counts against: what Django looks the user up by
    (its form field's cleaning), case-folded, cut to a bounded key."""
    field = AdminAuthenticationForm().fields["username"]
    return storable(str(field.to_python(raw) or "").casefold()[:NAME_KEY_LENGTH])


def address_key(address: str) -> str:
    """An IPv4 address as it is; an IPv6 address as its /64 (a subscriber holds a
    whole /64, so one client could otherwise change address at every attempt)."""
    found = parse_address(address)
    if isinstance(found, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((found, 64), strict=False))
    return str(found) if found is not None else storable(address[:64])


@dataclass(frozen=True)
class LoginBuckets:
    address: str
    name_at_address: str
    name: str

    def check(self) -> None:
        """Throttled when this attempt may not be tried (the module docstring)."""
        window = settings.LOGIN_WINDOW_SECONDS
        failures = "failed logins from your address"
        throttle.check_room(self.address, settings.LOGIN_FAILURES_PER_ADDRESS, window, failures)
        own = throttle.peek(self.name_at_address, window)
        failures = "failed logins for this user name from your address"
        throttle.check_peeked(own, settings.LOGIN_FAILURES_PER_USER, window, failures)
        if own.hits >= SHARED_LOCK_OWN_FAILURES:  # a few typos are never held back
            failures = "failed logins for this user name from many addresses"
            throttle.check_room(self.name, settings.LOGIN_FAILURES_PER_USER_TOTAL, window, failures)

    def count_failure(self) -> None:
        window = settings.LOGIN_WINDOW_SECONDS
        for key in (self.address, self.name_at_address, self.name):
            throttle.hit(key, 0, window, "failed logins")


def login_buckets(request: HttpRequest) -> LoginBuckets:
    name = login_name(request.POST.get("username", ""))
    address = address_key(client_address(request))
    return LoginBuckets(
        address=f"login-addr:{address}",
        name_at_address=f"login-user-addr:{address} {name}",
        name=f"login-user:{name}",
    )
