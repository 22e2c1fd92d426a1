"""The newznab API's domain errors, each naming the spec's error code (v0.4).

Services and selectors raise these; `newznab.api` alone turns them into the
spec's `<error code=… description=…/>` (or its JSON form), and a rate limit
into HTTP 429.
"""

from __future__ import annotations

from core.errors import DomainError


class NewznabError(DomainError):
    code = 900  # "Unknown error"


class BadApiKey(NewznabError):
    code = 100  # Incorrect user credentials


class ApiKeyDisabled(NewznabError):
    code = 101  # Account suspended


class MissingParameter(NewznabError):
    code = 200


class BadParameter(NewznabError):
    code = 201


class NoSuchFunction(NewznabError):
    code = 202


class FunctionNotAvailable(NewznabError):
    code = 203


class NoSuchItem(NewznabError):
    code = 300


class RateLimited(NewznabError):
    code = 500  # Request limit reached

    def __init__(self, detail: str, retry_after: int) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class Unavailable(NewznabError):
    """The database does not answer (a restart, a failover): HTTP 503 with Retry-After.

    The spec has no code for "try again later"; 900 (unknown error) carries the
    sentence, and the status tells a client to retry.
    """

    code = 900


DATABASE_UNAVAILABLE = "The indexer's database is unavailable; retry in a few seconds."
