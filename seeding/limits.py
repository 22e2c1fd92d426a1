"""The limits of what a node may report, shared by the coordinator and the agent.

The coordinator rejects a batch that breaks one (seeding/validation.py); the
agent (seeding/agent) leaves such a file out rather than have its whole batch
refused. No Django here: the agent imports this module.
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
MESSAGE_ID = re.compile(r"<[^<>\s@]+@[^<>\s]+>\Z")
