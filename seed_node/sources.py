"""Where a node reads overview lines from: its own news server, or the coordinator's relay.

Both hand out raw overview lines (no CRLF) of one span of a range, in article
order, at most ``CHUNK`` articles per request. A failure of the news server
(refused connection, 502, authentication, a pool that stays busy) is raised as
``NewsServerFailure``: the worker then releases its range with the error.
"""

from __future__ import annotations

import http.client
import logging
import time
import zlib
from collections.abc import Iterator
from typing import Protocol

from usenet.nntp import NNTPError, NNTPPool, NoArticles
from usenet.numbers import ascii_digits

from .http import Aborted, Backoff, Coordinator, CoordinatorError, LeaseLost

log = logging.getLogger(__name__)

CHUNK = 50_000  # articles per OVER or relay request (the relay's own limit)
_READ_SIZE = 256 * 1024
_RELAY_RETRIES = 5


class NewsServerFailure(Exception):
    """The overviews could not be read; the message says why (no credentials in it)."""


class RangeRef(Protocol):
    id: int
    group: str
    epoch: int


class OverviewSource(Protocol):
    waited: float  # seconds spent waiting for the overviews' bytes, all spans so far

    def lines(self, lease: RangeRef, first: int, last: int) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class _Source:
    """What both sources share: the seconds they waited, and a repr naming where they read."""

    waited = 0.0  # an instance's own once it first adds to it

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.where()}>"

    def where(self) -> str:
        raise NotImplementedError

    def close(self) -> None:
        pass


class NewsServerSource(_Source):
    """OVER from the node's own news server through one shared connection pool."""

    def __init__(self, pool: NNTPPool) -> None:
        self.pool = pool

    def where(self) -> str:
        return str(self.pool.config)

    def lines(self, lease: RangeRef, first: int, last: int) -> Iterator[bytes]:
        try:
            with self.pool.connection() as client:
                waited = client.recv_seconds
                try:
                    # The server shows OVER only what its last GROUP reply counted:
                    # articles posted since then need GROUP again (else a new tail
                    # reads as a hole). A span within that mark skips the round trip.
                    high = client.group_last
                    if client.current_group != lease.group or high is None or last > high:
                        client.group(lease.group)
                    yield from client.over(first, last)
                except NoArticles:
                    return  # the whole span is a hole
                finally:
                    self.waited += client.recv_seconds - waited
        except NNTPError as exc:
            raise NewsServerFailure(f"news server {self.pool.config}: {exc}") from exc

    def close(self) -> None:
        self.pool.close()


class RelaySource(_Source):
    """``GET /ranges/{id}/overviews``: the coordinator reads its own news server for us.

    The body is gzip'd overview lines; it is decompressed as it streams in. A
    broken stream is asked for again from the article after the last line read.
    """

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator

    def where(self) -> str:
        return self.coordinator.base_url

    def lines(self, lease: RangeRef, first: int, last: int) -> Iterator[bytes]:
        backoff = Backoff(cap=self.coordinator.max_backoff)
        resume = first
        attempts = 0
        while resume <= last:
            query = {"epoch": lease.epoch, "from": resume, "to": last}
            try:
                response = self.coordinator.open_stream(f"/ranges/{lease.id}/overviews", query)
            except LeaseLost:
                raise
            except CoordinatorError as exc:
                raise NewsServerFailure(f"overview relay: {exc}") from exc
            try:
                for line in _gunzip_lines(response, self):
                    yield line
                    number = line.split(b"\t", 1)[0]
                    if ascii_digits(number):
                        resume = int(number) + 1
                return
            except (OSError, http.client.HTTPException, zlib.error) as exc:
                attempts += 1
                if attempts > _RELAY_RETRIES:
                    raise NewsServerFailure(f"overview relay stream broke: {exc}") from exc
                delay = backoff.next_delay()
                log.warning(
                    "relay stream for range %s broke (%s); again from %s", lease.id, exc, resume
                )
                if self.coordinator.abort.wait(delay):
                    # Not `return`: the reader would take the rest of the span as read.
                    raise Aborted(
                        f"relay for range {lease.id} abandoned: the node is stopping now"
                    ) from exc
            finally:
                response.close()


def _gunzip_lines(response: http.client.HTTPResponse, source: RelaySource) -> Iterator[bytes]:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending = b""
    while True:
        started = time.perf_counter()
        chunk = response.read(_READ_SIZE)
        source.waited += time.perf_counter() - started
        if not chunk:
            break
        data = pending + inflater.decompress(chunk)
        while inflater.eof and inflater.unused_data:  # concatenated gzip members
            rest = inflater.unused_data
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
            data += inflater.decompress(rest)
        lines = data.split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line:
                yield _unwire(line)
    data = pending + inflater.flush()
    if not inflater.eof:
        raise zlib.error("the gzip body ended early")
    for line in data.split(b"\n"):
        if line.strip():
            yield _unwire(line)


def _unwire(line: bytes) -> bytes:
    # Wire form: CRLF ends; a line starting with "." may come dot-stuffed.
    if line.endswith(b"\r"):
        line = line[:-1]
    if line.startswith(b".."):
        line = line[1:]
    return line
