"""``NNTPClient.body``: BODY <message-id> from INN2, bounded in size and time."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

import pytest

from tests.support.inn2 import InnServer
from tests.support.usenet import Article
from usenet.nntp import ArticleTooLarge, NNTPClient, NoSuchArticle, UnsafeArgument

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.body.test"


def post(inn_server: InnServer, body: bytes) -> str:
    message_id = f"<{uuid.uuid4().hex}@body.test>"
    article = Article(
        message_id=message_id,
        date=datetime.now(UTC),
        newsgroups=(GROUP,),
        headers=(("From", "poster <p@x.invalid>"), ("Subject", "body test")),
        body=body,
    )
    result = inn_server.post_articles(None, [article])
    assert result.accepted == 1, result.refused
    return message_id


@pytest.fixture(scope="module")
def group(inn_server: InnServer) -> str:
    inn_server.create_group(GROUP)
    return GROUP


def client_for(inn_server: InnServer) -> NNTPClient:
    return NNTPClient(inn_server.host, inn_server.port, timeout=10.0).connect()


def test_body_comes_unstuffed_with_crlf_line_ends(inn_server: InnServer, group: str) -> None:
    lines = [b"first line", b".a line that starts with a dot", b"..two dots", b"", b"last"]
    message_id = post(inn_server, b"\r\n".join(lines) + b"\r\n")
    with client_for(inn_server) as client:
        body = client.body(message_id, max_bytes=10_000)
        assert body == b"\r\n".join(lines) + b"\r\n"
        # The connection is at the next command after the terminator.
        assert client.body(message_id, max_bytes=10_000) == body


def test_an_unknown_message_id_is_no_such_article_and_the_connection_stays(
    inn_server: InnServer, group: str
) -> None:
    message_id = post(inn_server, b"still here\r\n")
    with client_for(inn_server) as client:
        with pytest.raises(NoSuchArticle) as raised:
            client.body("<never-posted@body.test>", max_bytes=1000)
        assert raised.value.code == 430
        assert client.connected
        assert client.body(message_id, max_bytes=1000) == b"still here\r\n"


def test_a_body_over_the_cap_closes_the_connection(inn_server: InnServer, group: str) -> None:
    message_id = post(inn_server, (b"x" * 100 + b"\r\n") * 5000)  # 510 KB
    with client_for(inn_server) as client:
        with pytest.raises(ArticleTooLarge, match="over 20000 bytes"):
            client.body(message_id, max_bytes=20_000)
        assert not client.connected
    with client_for(inn_server) as client:  # exactly at the cap is fine
        assert len(client.body(message_id, max_bytes=510_000)) == 510_000


def test_a_body_still_arriving_at_the_deadline_is_given_up(
    inn_server: InnServer, group: str
) -> None:
    message_id = post(inn_server, (b"y" * 100 + b"\r\n") * 20_000)  # 2 MB: several reads
    with client_for(inn_server) as client:
        with pytest.raises(ArticleTooLarge, match="took too long"):
            client.body(message_id, max_bytes=10_000_000, deadline=time.monotonic() - 1)
        assert not client.connected


@pytest.mark.parametrize(
    "bad",
    ["no-brackets@x", "<a b@x>", "<a@x>\r\nQUIT", "<>", "<a>b@x>", "<" + "a" * 250 + ">", "<é@x>"],
)
def test_a_message_id_that_is_not_one_is_refused_before_sending(
    inn_server: InnServer, group: str, bad: str
) -> None:
    with client_for(inn_server) as client:
        with pytest.raises(UnsafeArgument):
            client.body(bad, max_bytes=1000)
        assert client.connected
        client.date()  # nothing half-sent is waiting on the connection
