"""When the buffering worker hands a request to a thread (coordinator/gunicorn_worker.py).

The whole behaviour, fifty slow clients against a real `serve`, is in
tests/chaos/test_slow_clients.py; these are the cases of the rule itself.
"""

from __future__ import annotations

import pytest

from coordinator.gunicorn_worker import BUFFER_BYTES, HEAD_BYTES, request_ready

HEAD = b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("data", "ready"),
    [
        (b"GET /healthz HTTP/1.1\r\nHost: x", False),  # the head is not over
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", True),  # no body
        (HEAD + b"Content-Length: 10\r\n\r\n12345", False),  # half the body
        (HEAD + b"content-length: 10\r\n\r\n1234567890", True),  # any case
        (HEAD + b"Content-Length: %d\r\n\r\n" % (BUFFER_BYTES + 1), True),  # streams in a thread
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\n", True),  # read by the thread
        (HEAD + b"Content-Length: 9\r\nExpect: 100-continue\r\n\r\n", True),  # waits for 100
        (b"GET /" + b"a" * HEAD_BYTES, True),  # an endless head: the thread refuses it
        (HEAD + b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n", True),  # never built: a thread
    ],
)
def test_a_request_goes_to_a_thread_once_it_is_whole_or_large(data: bytes, ready: bool) -> None:
    assert request_ready(data) is ready
