"""What the API-key commands share (issue_api_key, rotate_api_key, disable_api_key,
enable_api_key): their exit statuses, so a script tells the failures apart, and
the reading of --rate-limit.

Each command calls the service the admin's page or list action calls, so it
writes the same rows and the same audit entry (the actor "manage.py"). A key
is printed once, alone on its line on stdout; everything said to a person
goes to stderr, and nothing writes a key to a log.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from core.columns import column_bounds
from core.errors import DomainError, NameTaken, NotFound
from usenet.numbers import NotANumber, whole_number

from ..errors import ApiKeyDisabled
from ..models import ApiKey

# Exit statuses (1: any other error, such as a name of more than 100 characters;
# 2: the command line itself, from argparse).
UNKNOWN_NAME = 3
NAME_TAKEN = 4
BAD_RATE_LIMIT = 5
KEY_DISABLED = 6

EXIT_CODES: dict[type[DomainError], int] = {
    NotFound: UNKNOWN_NAME,
    NameTaken: NAME_TAKEN,
    ApiKeyDisabled: KEY_DISABLED,
}

STORE_IT = "The key is shown once; store it now:"


def rate_limit(text: str | None) -> int | None:
    """--rate-limit read as requests a minute within its column's range; None if not given."""
    if text is None:
        return None
    low, high = column_bounds(ApiKey._meta.get_field("rate_limit"))
    try:
        return whole_number(text, low=low, high=high)
    except NotANumber as exc:
        raise CommandError(
            f"--rate-limit {text!r}: expected {exc.expected} (requests a minute; 0: no limit), "
            "in ASCII digits 0-9.",
            returncode=BAD_RATE_LIMIT,
        ) from None
