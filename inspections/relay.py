"""The body relay: a node without a news server reads an inspection's articles
through the coordinator's (docs/api.md, "Inspection leases").

Only a message-id the node's current lease names is fetched, with BODY from
NEWS_SERVER_URL's pool, bounded by INSPECT_RELAY_MAX_BYTES and in time by
INSPECT_RELAY_SECONDS (a trickling server cannot hold a worker); the call keeps
the lease alive.
"""

from __future__ import annotations

import time

from django.conf import settings

from core.errors import ArticleMissing, NotFound, TooLarge, Unavailable
from indexer.newsserver import news_pool
from usenet.nntp import BodyTooLarge, NNTPError, NNTPPool, NoSuchArticle, UnsafeArgument

from .services import INSPECTIONS
from .sql import queries


def relay_body(
    node_id: int, inspection_id: int, epoch: int, message_id: str, *, pool: NNTPPool | None = None
) -> bytes:
    """The article body (dot-stuffing undone, CRLF lines) of one of the lease's message-ids."""
    fenced = INSPECTIONS.fenced(node_id, inspection_id, epoch)
    row = queries.fetchone("relay_inspection", {**fenced, "message_id": message_id})
    if row is None:
        holder = INSPECTIONS.holder_of(inspection_id)
        if holder is None or (holder.status, holder.node_id, holder.epoch) != (
            "leased",
            node_id,
            epoch,
        ):
            raise INSPECTIONS.lease_lost(node_id, inspection_id, epoch, holder)
        raise NotFound(
            f"{message_id} is not an article of inspection {inspection_id}: "
            "ask only for the message-ids its lease names."
        )
    most = int(settings.INSPECT_RELAY_MAX_BYTES)
    deadline = time.monotonic() + float(settings.INSPECT_RELAY_SECONDS)
    try:
        with (pool or news_pool()).connection() as client:
            return client.body(message_id, most, deadline=deadline)
    except NoSuchArticle:
        raise ArticleMissing(
            f"The coordinator's news server has no article {message_id} (430): "
            "report it in missing."
        ) from None
    except BodyTooLarge:
        raise TooLarge(
            f"The body of {message_id} is longer than INSPECT_RELAY_MAX_BYTES ({most} bytes): "
            "report it in missing."
        ) from None
    except UnsafeArgument:
        raise NotFound(
            f"{message_id!r} is not a message-id the news server can be asked for."
        ) from None
    except NNTPError as exc:  # client messages carry host and port, never the password
        raise Unavailable(
            f"The coordinator's news server is unavailable ({exc.message}); retry with backoff."
        ) from None
