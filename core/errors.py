"""The domain's errors: what went wrong, in a sentence, and nothing about HTTP.

Services, selectors, planning, the relay and snapshots raise these; the API
edge maps each class to a status and code (`core.api.errors`), the
commands turn them into `CommandError`s and the admin into messages. Each
carries `detail`, a sentence that names the field or the thing and says what
to do, shown as is to a node, an operator or a terminal.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base of every error a service raises on purpose; `detail` is the sentence."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class Invalid(DomainError):
    """The input is malformed or out of range (names the field)."""


class NameTaken(Invalid):
    """Another row has the name a new one asks for (an API user)."""


class NotFound(DomainError):
    """The thing named does not exist (a range, a group, a file)."""


class ArticleMissing(NotFound):
    """The news server has no article by that message-id (430)."""


class LeaseLost(DomainError):
    """The lease is another node's, its epoch is stale, or it ended."""


class TooLarge(DomainError):
    """A body or upload is over its configured limit."""


class Throttled(DomainError):
    """Too many calls in a rate window: retry after `retry_after` seconds."""

    def __init__(self, detail: str, retry_after: int = 60) -> None:
        super().__init__(detail)
        self.retry_after = retry_after


class TooManyLeases(Throttled):
    """The node holds as many live leases as one node may: finish or release one first."""


class UploadInProgress(Throttled):
    """Another upload of the same lane snapshot is still streaming: retry after it."""


class Unavailable(DomainError):
    """Something the coordinator depends on (database, disk, news server) failed: retry."""


class StorageFull(Unavailable):
    """The disk (or quota) an upload goes to is full: nothing was kept; the old file stays."""


# A row id past PostgreSQL's bigint cannot exist (and would overflow the query).
MAX_ROW_ID = 2**63 - 1


def checked_id(value: int, what: str) -> int:
    """An id taken from a URL; NotFound ("Range 9… does not exist.") past bigint."""
    if value > MAX_ROW_ID:
        raise NotFound(f"{what} {value} does not exist.")
    return value
