"""``NNTPClient.body`` gives up on a body still arriving at its deadline (INN2)."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from tests.support.inn2 import InnServer
from tests.support.usenet import Article
from usenet.nntp import NNTPClient, NNTPConnectionError

pytestmark = pytest.mark.inn

GROUP = "alt.binaries.body.deadline"


def test_a_body_still_arriving_at_the_deadline_is_given_up(inn_server: InnServer) -> None:
    inn_server.create_group(GROUP)
    body = (b"y" * 100 + b"\r\n") * 20_000  # 2 MB: many reads of the socket
    headers = (("From", "p <p@x.invalid>"), ("Subject", "deadline"))
    article = Article("<deadline@body.test>", datetime.now(UTC), (GROUP,), headers, body)
    assert inn_server.post_articles(None, [article]).accepted == 1
    with NNTPClient(inn_server.host, inn_server.port, timeout=10.0) as client:
        assert client.body(article.message_id, len(body), deadline=time.monotonic() + 60) == body
        with pytest.raises(NNTPConnectionError, match="still arriving at its deadline"):
            client.body(article.message_id, len(body), deadline=time.monotonic() - 1)
        assert not client.connected
