"""Typed errors of the news-server client.

Callers decide by type: a missing group or empty range is normal during
indexing, while a connection or protocol error means the connection is
unusable and must be dropped. Messages never carry credentials.
"""

from __future__ import annotations


class NNTPError(Exception):
    """A failure talking to a news server; `code` is the NNTP status, if any."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(f"{code} {message}" if code is not None else message)
        self.code = code
        self.message = message


class NoSuchGroup(NNTPError):
    """411: the server does not carry the group."""


class NoArticles(NNTPError):
    """423 (no articles in that range) or 420 (no current article)."""


class AuthRequired(NNTPError):
    """480 or a rejected AUTHINFO: the server wants (other) credentials."""


class AccessDenied(NNTPError):
    """502: the server refuses this command or this client for good."""


class ServiceDiscontinued(NNTPError):
    """400: the server is going away or refuses service for now."""


class UnsafeArgument(NNTPError, ValueError):
    """A command argument holds CR, LF or NUL: refused before anything is sent."""


class NNTPProtocolError(NNTPError):
    """The server said something the protocol does not allow here."""


class CompressionError(NNTPProtocolError):
    """A compressed response could not be decoded; the connection is unusable."""


class NNTPConnectionError(NNTPError):
    """The socket failed, timed out or was closed; the connection is unusable."""


class PoolExhausted(NNTPError):
    """Every pooled connection stayed busy for the whole wait."""


_ERRORS_BY_CODE: dict[int, type[NNTPError]] = {
    400: ServiceDiscontinued,
    411: NoSuchGroup,
    420: NoArticles,
    423: NoArticles,
    480: AuthRequired,
    481: AuthRequired,
    482: AuthRequired,
    502: AccessDenied,
}


def error_for_reply(code: int, message: str) -> NNTPError:
    """The typed error for an error status line (4xx/5xx)."""
    return _ERRORS_BY_CODE.get(code, NNTPError)(message, code)
