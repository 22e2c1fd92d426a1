"""The buffering worker (core/gunicorn_worker.py) and the pace it holds clients to
(core/client_pace.py).

The whole behaviour against a real `serve` is in tests/deploy/test_held_bodies.py
(a hundred held connections), tests/deploy/test_open_file_limit.py and
tests/chaos/test_slow_clients.py (fifty slow bodies); these are the cases of its
rules: its pieces alone, then the worker itself run in this process
(tests/deploy/worker_harness.py), where each deadline is set short and socket
buffers are set small on both sides, so that what a test waits for happens on
any machine. The bounds the tests wait within are generous (the deadlines are
a second or two; the waits 15 s): without the rule the awaited answer never
comes at all.
"""

from __future__ import annotations

import errno
import socket
import threading
import time
from typing import Any

import pytest
from django.http import HttpResponse
from gunicorn.config import Config

from core.api.bodies import Head
from core.client_pace import AnswerNotTaken, ClientSocket, Pace, PacedReader
from core.gunicorn_worker import (
    BUFFER_BYTES,
    HEAD_BYTES,
    BufferingWorker,
    body_arrived,
    response_bytes,
    without_expect,
)
from tests.deploy.worker_harness import (
    answer_head,
    connect,
    hello,
    listener,
    running_worker,
    wait_until,
    whole_answer,
)

NODE_TOKEN = "Authorization: Bearer sn_" + "A" * 32  # of a token's form: bodies may be large


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


# --- the pace of a thread's reads and sends (core/client_pace.py) ------------


def pace(grace: float = 60, rate: float = 1 << 20, idle: float = 60) -> Pace:
    return Pace(grace=grace, rate=rate, idle=idle)


def test_a_thread_reading_a_body_gives_up_when_no_byte_comes() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        reader = PacedReader(ours, pace(idle=0.2))
        theirs.sendall(b"abc")
        assert reader.recv(10) == b"abc"
        with pytest.raises(TimeoutError, match=r"no byte arrived for 0\.2 s"):
            reader.recv(10)
        assert ours.gettimeout() is None  # blocking again, for the answer's writes


def test_a_trickled_body_is_cut_once_it_falls_behind_the_rate() -> None:
    # A byte every 0.1 s, never idle, against 1,000 bytes a second after a
    # 0.5 s grace: cut soon after the grace, whatever length it declared (the
    # deadline was once the declared length's: a 32 MiB batch had 36 minutes).
    ours, theirs = socket.socketpair()
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.1):
            theirs.sendall(b"x")

    sender = threading.Thread(target=trickle, daemon=True)
    with ours, theirs:
        reader = PacedReader(ours, pace(grace=0.5, rate=1000, idle=5))
        sender.start()
        try:
            with pytest.raises(TimeoutError, match="came slower than 1000 bytes a second"):
                while reader.pace.moved < 1000:  # 100 s at this trickle, were it not cut
                    reader.recv(10)
        finally:
            stop.set()
            sender.join()
    assert reader.pace.moved < 100


def test_the_time_the_server_spends_is_not_the_clients() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        reader = PacedReader(ours, pace(grace=0.3, rate=10, idle=5))
        theirs.sendall(b"a" * 20)
        assert reader.recv(10) == b"a" * 10
        time.sleep(0.5)  # the application works: past the grace, but not the client's time
        assert reader.recv(10) == b"a" * 10


def client_socket_pair(buffer: int = 4096) -> tuple[ClientSocket, socket.socket]:
    """A connection whose send buffer (ours) and receive buffer (theirs) are small."""
    ours, theirs = socket.socketpair()
    for sock, option in ((ours, socket.SO_SNDBUF), (theirs, socket.SO_RCVBUF)):
        sock.setsockopt(socket.SOL_SOCKET, option, buffer)
    return ClientSocket.adopt(ours), theirs


def test_an_answer_the_client_does_not_take_gives_up_after_the_idle_time() -> None:
    ours, theirs = client_socket_pair()
    with ours, theirs:
        ours.begin_answer(pace(idle=0.3))
        with pytest.raises(AnswerNotTaken, match=r"no byte of the answer was taken for 0\.3 s"):
            ours.sendall(b"x" * (4 << 20))
        assert ours.stalled is not None
        assert ours.gettimeout() is None


def test_an_answer_taken_at_a_trickle_is_cut_once_it_falls_behind_the_rate() -> None:
    # The client takes 256 bytes every 50 ms (never idle for the 5 s allowed),
    # far under the 1 MiB a second asked after a 0.5 s grace.
    ours, theirs = client_socket_pair()
    stop = threading.Event()

    def trickle() -> None:
        while not stop.wait(0.05):
            theirs.recv(256)

    reader = threading.Thread(target=trickle, daemon=True)
    with ours, theirs:
        reader.start()
        ours.begin_answer(pace(grace=0.5, rate=1 << 20, idle=5))
        try:
            with pytest.raises(AnswerNotTaken, match="came slower than 1048576 bytes a second"):
                ours.sendall(b"x" * (64 << 20))
        finally:
            stop.set()
            reader.join()
    assert ours.pace is not None and ours.pace.moved < 1 << 20


def test_a_file_goes_out_through_the_paced_send() -> None:
    ours, theirs = client_socket_pair()
    with ours, theirs:
        ours.begin_answer(pace(idle=0.3))
        with open(__file__, "rb") as file, pytest.raises(AnswerNotTaken):
            while True:  # the kernel's sendfile would block for ever here
                ours.sendfile(file)
                file.seek(0)


def test_without_a_pace_a_send_is_plain() -> None:
    ours, theirs = client_socket_pair()
    with ours, theirs:
        ours.sendall(b"abc")
        assert theirs.recv(10) == b"abc"


# --- the worker itself, in this process (tests/deploy/worker_harness.py) ------------


def test_an_endless_head_is_refused_by_the_main_loop_with_431() -> None:
    calls: list[str] = []

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        calls.append(environ["PATH_INFO"])
        return hello(environ, start_response)

    with running_worker(app) as served, connect(served.port) as client:
        # Ten header lines of 7,000 bytes: within gunicorn's limits, over HEAD_BYTES,
        # and never ended. A thread would wait for the rest until the deadline.
        client.sendall(b"GET /api/v1/status HTTP/1.1\r\nHost: x\r\n")
        client.sendall(b"".join(b"X-Pad-%d: %s\r\n" % (n, b"p" * 7000) for n in range(10)))
        head = answer_head(client)
        assert head.startswith(b"HTTP/1.1 431 "), head
        assert b"Connection: close" in head
        assert b'"error": "head_too_large"' in whole_answer(client)
    assert calls == []
    assert HEAD_BYTES < 10 * 7000


def test_a_head_that_stops_arriving_is_answered_408_by_the_main_loop(settings) -> None:
    settings.WEB_READ_SECONDS = 1
    with running_worker(hello) as served, connect(served.port) as client:
        client.sendall(b"GET /admin/ HTTP/1.1\r\nHost: x\r\n")  # and no more
        head = answer_head(client)
        assert head.startswith(b"HTTP/1.1 408 "), head
        assert b"did not arrive in time" in whole_answer(client)


def test_a_small_body_that_stops_arriving_is_answered_400_by_the_main_loop(settings) -> None:
    settings.WEB_READ_SECONDS = 1
    with running_worker(hello) as served, connect(served.port) as client:
        client.sendall(
            b"POST /api/v1/ranges/1/heartbeat HTTP/1.1\r\nHost: x\r\n"
            + NODE_TOKEN.encode()
            + b"\r\nContent-Length: 100\r\n\r\n"
            + b'{"epoch": '  # then nothing more
        )
        head = answer_head(client)
        assert head.startswith(b"HTTP/1.1 400 "), head
        body = whole_answer(client)
        assert b'"error": "invalid"' in body and b"The body broke off before its end" in body


def test_a_connection_that_sends_nothing_is_closed_without_an_answer(settings) -> None:
    settings.WEB_READ_SECONDS = 1
    with running_worker(hello) as served, connect(served.port) as client:
        assert whole_answer(client) == b""


def reading_app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """Reads the whole body; a body that broke off is a 400 saying why."""
    try:
        environ["wsgi.input"].read()
    except OSError as exc:
        start_response("400 Bad Request", [("Content-Type", "text/plain")])
        return [f"broke off: {exc}".encode()]
    return hello(environ, start_response)


def test_a_body_a_thread_reads_is_cut_once_it_falls_behind_the_rate(settings) -> None:
    settings.WEB_READ_SECONDS = 1
    settings.WEB_BODY_MIN_BYTES_PER_SECOND = 1000
    settings.WEB_BODY_IDLE_SECONDS = 5
    length = 2 * BUFFER_BYTES  # read by a thread
    with running_worker(reading_app) as served, connect(served.port) as client:
        client.sendall(
            b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Length: %d\r\n\r\n"
            % (NODE_TOKEN.encode(), length)
        )
        client.settimeout(0.2)
        answer = b""
        for _ in range(150):  # a byte every 0.2 s, never idle: at most 30 s
            client.sendall(b" ")
            try:
                answer = client.recv(65536)
                break
            except TimeoutError:
                continue
        client.settimeout(15)
        answer += whole_answer(client)
        assert answer.startswith(b"HTTP/1.1 400 "), answer
        assert b"came slower than 1000 bytes a second after its first 1 s" in answer


def big_answer(environ: dict[str, Any], start_response: Any) -> Any:
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(8 << 20))])
    return (b"x" * 65536 for _ in range(128))


def test_an_answer_the_client_does_not_take_frees_its_thread(settings) -> None:
    settings.WEB_BODY_IDLE_SECONDS = 1
    # Small buffers on both sides: the 8 MiB answer blocks its send on any machine.
    with running_worker(big_answer, threads=1, sock=listener(sndbuf=4096)) as served:
        stalled = connect(served.port, rcvbuf=4096)
        with stalled:
            stalled.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")  # never read
            with connect(served.port) as other:  # the worker's one thread is busy
                other.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                assert answer_head(other).startswith(b"HTTP/1.1 200 ")
        # The thread is free once its send gives up; the main loop closes the
        # stalled connection (and logs why) when it next runs, which a loaded
        # machine may let happen after the thread has answered `other`.
        assert wait_until(lambda: "no byte of the answer was taken for 1 s" in served.log.text())


def test_an_answer_taken_at_a_trickle_frees_its_thread(settings) -> None:
    settings.WEB_READ_SECONDS = 1
    settings.WEB_BODY_MIN_BYTES_PER_SECOND = 1 << 20
    settings.WEB_BODY_IDLE_SECONDS = 10
    with running_worker(big_answer, threads=1, sock=listener(sndbuf=4096)) as served:
        with connect(served.port, rcvbuf=4096) as slow:
            slow.sendall(b"GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
            taken = 0
            try:
                while chunk := slow.recv(1000):  # 10 KB/s, under the 1 MiB/s asked
                    taken += len(chunk)
                    time.sleep(0.1)
            except ConnectionResetError:
                pass  # cut with a reset: what it never took is dropped
        assert taken < 1 << 20
        assert "the answer was taken came slower than" in served.log.text()


def test_an_answer_after_an_unread_body_says_connection_close() -> None:
    with running_worker(hello) as served, connect(served.port) as client:
        client.sendall(
            b"POST /api/v1/ranges/1/batch HTTP/1.1\r\nHost: x\r\n%s\r\nContent-Length: %d\r\n\r\n"
            % (NODE_TOKEN.encode(), 2 * BUFFER_BYTES)
            + b"{"  # the application answers without reading the rest
        )
        head = answer_head(client)
        assert head.startswith(b"HTTP/1.1 200 ") and b"Connection: close" in head, head
        assert whole_answer(client) == b"hello\n"  # and the connection closes


def test_an_answer_after_a_read_body_keeps_the_connection() -> None:
    with running_worker(reading_app) as served, connect(served.port) as client:
        client.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
        head = answer_head(client)
        assert b"Connection: keep-alive" in head, head


def refused_and_held(port: int) -> Any:
    """A connection whose request is refused unread (a body on a GET), left open:
    the worker lingers on it, discarding what it sends, until it closes."""
    client = connect(port)
    client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
    assert answer_head(client).startswith(b"HTTP/1.1 413 ")
    return client


def test_a_closing_connection_counts_against_worker_connections() -> None:
    with running_worker(hello, connections=3) as served:
        held = [refused_and_held(served.port) for _ in range(3)]
        # Each socket is still open: the worker counts it and stops accepting.
        assert wait_until(lambda: served.worker.nr_conns == 3 and not served.worker._accepting)
        for client in held:
            client.close()
        assert wait_until(lambda: served.worker.nr_conns == 0)
        with connect(served.port) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert answer_head(client).startswith(b"HTTP/1.1 200 ")


class OutOfFiles:
    """A listener whose first `failures` accepts fail as a process out of files does."""

    def __init__(self, sock: socket.socket, failures: int) -> None:
        self.sock = sock
        self.failures = failures

    def accept(self) -> tuple[socket.socket, Any]:
        if self.failures > 0:
            self.failures -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        return self.sock.accept()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sock, name)


def test_a_worker_out_of_files_stops_accepting_for_a_moment_and_goes_on() -> None:
    with running_worker(hello, sock=OutOfFiles(listener(), failures=3)) as served:
        with connect(served.port) as client:
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert answer_head(client).startswith(b"HTTP/1.1 200 ")
        assert served.thread.is_alive()
    warnings = [line for level, line in served.log.lines if level == "warning"]
    assert len(warnings) == 3
    assert warnings[0].startswith("cannot accept a connection (Too many open files) with 0 open")


def test_the_worker_refuses_to_run_under_gunicorns_own_tls(tmp_path) -> None:
    cfg = Config()
    for name in ("certfile", "keyfile"):
        (tmp_path / name).write_text("")
        cfg.set(name, str(tmp_path / name))
    with pytest.raises(RuntimeError, match="terminate TLS in the proxy in front"):
        BufferingWorker.check_config(cfg, None)
