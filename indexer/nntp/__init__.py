"""The project's news-server client: connections, a pool, dates and date search."""

from __future__ import annotations

from indexer.nntp.client import GroupInfo, NNTPClient
from indexer.nntp.config import NewsServerConfig
from indexer.nntp.errors import (
    AccessDenied,
    AuthRequired,
    CompressionError,
    NNTPConnectionError,
    NNTPError,
    NNTPProtocolError,
    NoArticles,
    NoSuchGroup,
    PoolExhausted,
    ServiceDiscontinued,
)
from indexer.nntp.pool import NNTPPool
from indexer.nntp.search import DateSearchResult, article_at_date, find_article_at_date

__all__ = [
    "AccessDenied",
    "AuthRequired",
    "CompressionError",
    "DateSearchResult",
    "GroupInfo",
    "NNTPClient",
    "NNTPConnectionError",
    "NNTPError",
    "NNTPPool",
    "NNTPProtocolError",
    "NewsServerConfig",
    "NoArticles",
    "NoSuchGroup",
    "PoolExhausted",
    "ServiceDiscontinued",
    "article_at_date",
    "find_article_at_date",
]
