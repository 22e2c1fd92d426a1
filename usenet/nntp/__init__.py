"""The project's news-server client: connections, a pool, dates and date search."""

from __future__ import annotations

from usenet.nntp.client import GroupInfo, NNTPClient, unstuff
from usenet.nntp.config import NewsServerConfig
from usenet.nntp.errors import (
    AccessDenied,
    AuthRequired,
    BodyTooLarge,
    CompressionError,
    NNTPConnectionError,
    NNTPError,
    NNTPProtocolError,
    NoArticles,
    NoSuchArticle,
    NoSuchGroup,
    PoolExhausted,
    ServiceDiscontinued,
    UnsafeArgument,
)
from usenet.nntp.pool import NNTPPool
from usenet.nntp.search import DateSearchResult, article_at_date, find_article_at_date

__all__ = [
    "AccessDenied",
    "AuthRequired",
    "BodyTooLarge",
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
    "NoSuchArticle",
    "NoSuchGroup",
    "PoolExhausted",
    "ServiceDiscontinued",
    "UnsafeArgument",
    "article_at_date",
    "find_article_at_date",
    "unstuff",
]
