"""The pieces of the buffering worker (core/gunicorn_worker.py).

The whole behaviour against a real `serve` is in tests/deploy/test_held_bodies.py
(a hundred held connections) and tests/chaos/test_slow_clients.py (fifty slow
bodies); these are the cases of its rules.
"""

from __future__ import annotations

import socket
import time

import pytest
from django.http import HttpResponse

from core.api.bodies import Head
from core.gunicorn_worker import (
    BUFFER_BYTES,
    DeadlineSocket,
    body_arrived,
    response_bytes,
    without_expect,
)


@pytest.mark.parametrize(
    ("head", "buffered", "arrived"),
    [
        (Head("GET", "/healthz"), 0, True),  # no body
        (Head("POST", "/x", length=10), 5, False),  # half the body
        (Head("POST", "/x", length=10), 10, True),
        (Head("POST", "/x", length=BUFFER_BYTES + 1), 0, True),  # streams in a thread
        (Head("PUT", "/x", chunked=True), 0, True),  # read by the thread
    ],
)
def test_a_request_goes_to_a_thread_once_it_is_whole_or_large(
    head: Head, buffered: int, arrived: bool
) -> None:
    assert body_arrived(head, buffered) is arrived


def test_the_main_loop_answers_100_continue_so_the_head_loses_its_expect() -> None:
    head = b"POST /x HTTP/1.1\r\nHost: x\r\nEXPECT: 100-continue\r\nContent-Length: 3"
    assert without_expect(head) == b"POST /x HTTP/1.1\r\nHost: x\r\nContent-Length: 3"


def test_a_refusal_goes_out_as_a_closing_http_answer() -> None:
    raw = response_bytes(HttpResponse(b"no\n", status=413, content_type="text/plain"))
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 Request Entity Too Large\r\n")
    assert b"\r\nContent-Length: 3\r\n" in head and head.endswith(b"Connection: close")
    assert body == b"no\n"


def test_a_thread_reading_a_body_gives_up_when_no_byte_comes() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        reader = DeadlineSocket(ours, idle=0.2, deadline=time.monotonic() + 60)
        theirs.sendall(b"abc")
        assert reader.recv(10) == b"abc"
        with pytest.raises(TimeoutError, match=r"no byte arrived for 0\.2 s"):
            reader.recv(10)
        assert ours.gettimeout() is None  # blocking again, for the answer's writes


def test_a_thread_reading_a_body_gives_up_at_the_request_deadline() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        reader = DeadlineSocket(ours, idle=60, deadline=time.monotonic() + 0.2)
        with pytest.raises(TimeoutError, match="deadline"):
            reader.recv(10)
        theirs.sendall(b"late")
        with pytest.raises(TimeoutError, match="deadline"):
            reader.recv(10)  # past the deadline nothing more is read
        assert ours.gettimeout() is None
