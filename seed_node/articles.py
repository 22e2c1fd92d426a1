"""Where an inspecting node fetches article bodies: its own news server, or the relay.

Both answer ``body(lease, message_id, max_bytes)`` with the body as
``inspection`` takes it, never more than ``max_bytes`` of it, within
``fetch_seconds``: as on the wire, still dot-stuffed, when the source's
``stuffed`` says so (the news server's: sabctools undoes the stuffing as it
decodes, so the body is never passed over in Python), else dot-stuffing undone
(the relay's). An article that is not there, or
too large, is ``ArticleMissing`` (the node reports it in ``missing``); a news
server (or relay) that fails is ``NewsServerFailure`` (the node releases the
lease uncounted); a lost lease is the coordinator client's ``LeaseLost``.
"""

from __future__ import annotations

import http.client
import time
from typing import Protocol

from usenet.nntp import (
    BodyTooLarge,
    NNTPError,
    NNTPPool,
    NoSuchArticle,
    UnsafeArgument,
)

from .http import Coordinator, NotFound, Rejected, Unavailable
from .sources import NewsServerFailure

_READ_SIZE = 64 * 1024
# 502/503/504 answers in a row from the relay before the node gives the lease back:
# the coordinator's news server is down, and the lease's TTL runs meanwhile.
RELAY_ATTEMPTS = 3


class ArticleMissing(Exception):
    """This article cannot be had: not on the server (430), too large, or not a message-id."""


class InspectionRef(Protocol):
    id: int
    epoch: int


class ArticleSource(Protocol):
    stuffed: bool  # bodies as on the wire, dot-stuffing left in

    def body(self, lease: InspectionRef, message_id: str, max_bytes: int) -> bytes: ...


class NewsServerArticles:
    """BODY from the node's own news server, through the pool it reads overviews with."""

    stuffed = True

    def __init__(self, pool: NNTPPool, fetch_seconds: float) -> None:
        self.pool, self.fetch_seconds = pool, fetch_seconds

    def __repr__(self) -> str:
        return f"<NewsServerArticles {self.pool.config}>"

    def body(self, lease: InspectionRef, message_id: str, max_bytes: int) -> bytes:
        deadline = time.monotonic() + self.fetch_seconds
        try:
            with self.pool.connection() as client:
                body = client.body(message_id, max_bytes, deadline=deadline, stuffed=True)
        except (NoSuchArticle, BodyTooLarge, UnsafeArgument) as exc:
            raise ArticleMissing(str(exc)) from exc
        except NNTPError as exc:
            # host:port only: the config's repr carries the username and the CA file,
            # and this sentence is stored as the inspection's error, shown in the admin.
            where = f"{self.pool.config.host}:{self.pool.config.port}"
            raise NewsServerFailure(f"news server {where}: {exc}") from exc
        return body


class RelayArticles:
    """``GET /inspections/{id}/body``: the coordinator fetches the body from its news server."""

    stuffed = False  # the relay sends the body unstuffed (docs/api.md)

    def __init__(self, coordinator: Coordinator, fetch_seconds: float) -> None:
        self.coordinator, self.fetch_seconds = coordinator, fetch_seconds

    def __repr__(self) -> str:
        return f"<RelayArticles {self.coordinator.base_url}>"

    def body(self, lease: InspectionRef, message_id: str, max_bytes: int) -> bytes:
        query = {"epoch": lease.epoch, "message_id": message_id}
        try:
            response = self.coordinator.open_stream(
                f"/inspections/{lease.id}/body", query, unavailable_attempts=RELAY_ATTEMPTS
            )
        except (NotFound, Rejected) as exc:  # 404: not there (430) or not this lease's; 413
            raise ArticleMissing(f"relay: {exc}") from exc
        except Unavailable as exc:  # 502/503/504, RELAY_ATTEMPTS times in a row
            raise NewsServerFailure(f"article relay: {exc}") from exc
        deadline = time.monotonic() + self.fetch_seconds
        body = bytearray()
        try:
            with response:
                while chunk := response.read(_READ_SIZE):
                    body += chunk
                    if len(body) > max_bytes:
                        raise ArticleMissing(
                            f"relay: the body of {message_id} is over {max_bytes} bytes"
                        )
                    if time.monotonic() > deadline:
                        raise NewsServerFailure(
                            f"article relay: the body of {message_id} took over "
                            f"{self.fetch_seconds:g} seconds"
                        )
        except (OSError, http.client.HTTPException) as exc:
            raise NewsServerFailure(f"article relay: the body broke off ({exc})") from exc
        return bytes(body)
