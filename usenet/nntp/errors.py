"""Typed errors of the news-server client.

Callers decide by type: a missing group or empty range is normal during
indexing, while a connection or protocol error means the connection is
unusable and must be dropped. Messages never carry credentials.
"""

from __future__ import annotations


class NNTPError(Exception):
    """A failure talking to a news server; `code` is the NNTP status, if any."""

    replies: tuple[int, ...] = ()  # the error status lines a subclass stands for

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(f"{code} {message}" if code is not None else message)
        self.code = code
        self.message = message


class NoSuchGroup(NNTPError):
    """The server does not carry the group."""

    replies = (411,)


class NoArticles(NNTPError):
    """No articles in that range (423), or no current article (420)."""

    replies = (420, 423)


class NoSuchArticle(NNTPError):
    """No article with that message-id (430), or none by that number (423 on BODY)."""

    replies = (430,)


class BodyTooLarge(NNTPError):
    """An article body longer than the caller's bound; the connection is unusable (unread rest)."""


class AuthRequired(NNTPError):
    """The server wants (other) credentials (480), or rejected the AUTHINFO given (481, 482)."""

    replies = (480, 481, 482)


class AccessDenied(NNTPError):
    """The server refuses this command or this client for good."""

    replies = (502,)


class ServiceDiscontinued(NNTPError):
    """The server is going away or refuses service for now."""

    replies = (400,)


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
    code: kind
    for kind in (
        ServiceDiscontinued,
        NoSuchGroup,
        NoArticles,
        NoSuchArticle,
        AuthRequired,
        AccessDenied,
    )
    for code in kind.replies
}


def error_for_reply(code: int, message: str) -> NNTPError:
    """The typed error for an error status line (4xx/5xx)."""
    return _ERRORS_BY_CODE.get(code, NNTPError)(message, code)
