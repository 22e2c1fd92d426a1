"""NNTPClient.body against INN2: the bytes posted, dot-unstuffed, bounded, 430 when absent."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.support.inn2 import InnServer
from tests.support.usenet import Article
from usenet.nntp import BodyTooLarge, NewsServerConfig, NNTPPool, NoSuchArticle, UnsafeArgument

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.body.test"
# A line starting with a dot is stuffed on the wire and must come back unstuffed.
BODY = b"=ybegin part=1 line=128 size=20 name=q8w7e6.par2\r\n.dotted line\r\n..two\r\nplain\r\n"


def _article(message_id: str, body: bytes) -> Article:
    headers = (("From", "Poster <p@example.invalid>"), ("Subject", "a8f7d6 [1/1] yEnc (1/1)"))
    return Article(message_id, datetime.now(UTC), (GROUP,), headers, body)


def test_body_reads_the_posted_bytes_and_bounds_them(inn_server: InnServer) -> None:
    inn_server.create_group(GROUP)
    big = b"".join(b"%06d" % n + b"x" * 120 + b"\r\n" for n in range(2000))  # 254 kB
    result = inn_server.post_articles(
        None, [_article("<body1@test.invalid>", BODY), _article("<body2@test.invalid>", big)]
    )
    assert result.accepted == 2, result.refused
    config = NewsServerConfig.from_url(f"{inn_server.url}/?connections=1&timeout=10")
    with NNTPPool(config) as pool:
        with pool.connection() as client:
            assert client.body("<body1@test.invalid>", 1000) == BODY
            assert client.body("<body2@test.invalid>", len(big)) == big
            # The connection stays usable after whole bodies.
            with pytest.raises(NoSuchArticle) as missing:
                client.body("<absent@test.invalid>", 1000)
            assert missing.value.code == 430
            assert client.body("<body1@test.invalid>", len(BODY)) == BODY
        with pool.connection() as client:
            with pytest.raises(BodyTooLarge):
                client.body("<body2@test.invalid>", len(big) - 1)
            assert not client.connected  # its unread rest cost the connection
        with pool.connection() as client:
            with pytest.raises(UnsafeArgument):
                client.body("<a@b>\r\nQUIT", 1000)
            with pytest.raises(UnsafeArgument):
                client.body("no-brackets@x", 1000)
            assert client.body("<body1@test.invalid>", 1000) == BODY
