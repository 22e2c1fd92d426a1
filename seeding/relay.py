"""The overview relay: a node reads a leased range's overviews through the coordinator.

Everything that can fail before the first line fails as a typed error; after
that the gzip stream just ends short and the node retries (docs/api.md, "The
overview relay"; docs/architecture.md, "Mechanisms").
"""

from __future__ import annotations

import logging
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from core.errors import DomainError, Invalid, NotFound, Unavailable
from indexer.newsserver import news_pool
from usenet.nntp import NNTPError, NNTPPool, NoArticles, NoSuchGroup

from . import services
from .models import RangeStatus
from .sql import queries

log = logging.getLogger(__name__)

# Articles one call relays at most; a node asks again from last + 1.
OVERVIEW_SPAN_LIMIT = 50_000
# Compressed output is flushed to the node after this much input, or this long.
FLUSH_BYTES = 64 * 1024
FLUSH_SECONDS = 0.5
GZIP_LEVEL = 1


@dataclass
class OverviewRelay:
    range_id: int
    group: str
    first: int
    last: int
    body: Iterator[bytes]


def relay_span(first: int, last: int, start: int, end: int) -> tuple[int, int]:
    """max(first, start) .. min(last, end, that + OVERVIEW_SPAN_LIMIT - 1)."""
    low = max(first, start)
    return low, min(last, end, low + OVERVIEW_SPAN_LIMIT - 1)


def open_overview_relay(
    node_id: int,
    range_id: int,
    epoch: int,
    first: int,
    last: int,
    *,
    pool: NNTPPool | None = None,
) -> OverviewRelay:
    """Check the lease, keep it alive, and start relaying first..last of the range."""
    if first > last:
        raise Invalid(f"from ({first}) is after to ({last}).")
    row = queries.fetchone(
        "relay_lease",
        {"range_id": range_id, "node_id": node_id, "epoch": epoch, "first": first, "last": last},
    )
    if row is None:
        raise _why_not(node_id, range_id, epoch, first, last)
    low, high = relay_span(first, last, row.start_id, row.end_id)
    group = row.name
    lines = _overview_lines(pool or news_pool(), group, low, high)
    try:
        next(lines)  # GROUP and the OVER reply: failures here still get their status
    except NoSuchGroup:
        raise NotFound(
            f"Group {group} is not on the coordinator's news server (411): "
            "release the range with an error."
        ) from None
    except NNTPError as exc:  # client messages carry host and port, never the password
        raise Unavailable(
            f"The coordinator's news server is unavailable ({exc.message}); retry with backoff."
        ) from None

    def keep_alive() -> None:
        try:
            services.heartbeat_range(node_id, range_id, epoch)
        except DomainError:
            pass  # the lease moved on while streaming; the node learns on its next call

    body = gzip_stream(lines, label=f"range {range_id} ({group} {low}-{high})", done=keep_alive)
    return OverviewRelay(range_id, group, low, high, body)


def _why_not(node_id: int, range_id: int, epoch: int, first: int, last: int) -> Exception:
    """Explain a relay_lease that matched nothing: 404, 409, or a span outside the range."""
    row = services.range_holder(range_id)
    if row is None or (row.status, row.node_id, row.epoch) != (RangeStatus.LEASED, node_id, epoch):
        return services._lease_lost(node_id, range_id, epoch, row)
    start, end = row.start_id, row.end_id
    return Invalid(
        f"from..to ({first}..{last}) lies outside range {range_id} ({start}..{end}): "
        "ask for articles of the range."
    )


def _overview_lines(pool: NNTPPool, group: str, first: int, last: int) -> Iterator[bytes | None]:
    """None once GROUP and OVER have been answered, then the overview lines."""
    with pool.connection() as client:
        client.group(group)
        lines = client.over(first, last)
        try:
            try:
                head = next(lines)
            except (NoArticles, StopIteration):
                yield None  # no article in the span: holes are normal
                return
            yield None
            yield head
            yield from lines
        finally:
            # Unread lines cost the connection (over() closes it), never the pool.
            getattr(lines, "close", lambda: None)()


def gzip_stream(
    lines: Iterator[bytes | None],
    *,
    label: str,
    done: Callable[[], None] | None = None,
) -> Iterator[bytes]:
    """gzip the lines (CRLF-terminated) as they come; truncated on error, never a bad 200."""
    packer = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    pending = 0
    count = 0
    flushed_at = time.monotonic()
    try:
        for line in lines:
            if line is None:
                continue
            chunk = packer.compress(line + b"\r\n")
            count += 1
            pending += len(line) + 2
            now = time.monotonic()
            if pending >= FLUSH_BYTES or now - flushed_at >= FLUSH_SECONDS:
                chunk += packer.flush(zlib.Z_SYNC_FLUSH)
                pending, flushed_at = 0, now
            if chunk:
                yield chunk
    except NNTPError as exc:
        log.warning("overview relay of %s broke after %d lines: %s", label, count, exc)
        return
    except Exception:
        log.exception("overview relay of %s failed after %d lines", label, count)
        return
    finally:
        close = getattr(lines, "close", None)
        if close is not None:
            close()
    yield packer.flush()
    if done is not None:
        done()
