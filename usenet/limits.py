"""The limits of what a node may report, shared by the coordinator and the agent.

The coordinator rejects a batch that breaks one (catalog/validation.py); the
agent (seed_node) leaves such a file or segment out rather than have its
whole batch refused. Both sides ask the same predicates below, so they cannot
drift apart. No Django here: the agent imports this module.
"""

from __future__ import annotations

import re

MAX_SUBJECT = 1000
MAX_POSTER = 500
MAX_MESSAGE_ID = 250
MAX_TOTAL = 100_000
MAX_SEGMENT_BYTES = 2**31 - 1
MAX_BIGINT = 2**63 - 1  # article numbers and row ids (PostgreSQL bigint)
MAX_ARTICLE = MAX_BIGINT
MAX_DATE = 4_102_444_800  # 2100-01-01: anything later is a broken clock
MAX_EPOCH = 2**31 - 1
MAX_HEADERS_PER_BATCH = 10_000_000
MAX_FILES_PER_BATCH = 100_000
# The agent's batches stay under this many bytes of JSON: half the coordinator's
# default API_MAX_BODY_BYTES (64 MiB), so a large drained window goes out in
# several batches instead of one the coordinator refuses (413).
MAX_BATCH_BYTES = 32 << 20
MESSAGE_ID = re.compile(r"<[^<>\s@]+@[^<>\s]+>\Z")


def storable_text(value: object, limit: int) -> bool:
    """A string the coordinator stores: at most ``limit`` characters, no NUL, valid Unicode.

    Emptiness is not checked here: a subject must have text, a poster need not.
    """
    if type(value) is not str or len(value) > limit or "\x00" in value:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")  # JSON lets a lone surrogate ("\ud800") through
    except UnicodeEncodeError:
        return False
    return True


def storable_segment(
    part: object, article: object, message_id: object, size: object, total: int
) -> bool:
    """Whether the coordinator stores a segment [part, article, message-id, bytes].

    ``total`` is the file's part count. bool is an int in Python, but JSON true is
    no number, hence ``type(...) is int``.
    """
    return (
        type(part) is int
        and 1 <= part <= total
        and type(article) is int
        and 0 <= article <= MAX_ARTICLE
        and type(size) is int
        and 0 <= size <= MAX_SEGMENT_BYTES
        and type(message_id) is str
        and MESSAGE_ID.match(message_id) is not None
        and storable_text(message_id, MAX_MESSAGE_ID)
    )
