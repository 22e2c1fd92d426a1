"""Review of the HTTP edge: clients that still hold every thread of a real `serve`.

Same server as tests/deploy/test_held_bodies.py (the buffering worker, 3 workers
of 8 threads, WEB_BODY_IDLE_SECONDS=5). Each test opens connections that keep a
thread each, then asks /healthz: with every thread held it never answers.
"""

from __future__ import annotations

import http.client
import resource
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.deploy.test_held_bodies import Served
from tests.e2e.fleet import fresh_database

pytestmark = pytest.mark.e2e

CONNECTIONS = 150  # enough that each of the 3 workers gets more than its 8 threads


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("review-edge")
    with fresh_database() as (url, conninfo):
        server = Served(url, conninfo, workdir)
        try:
            server.start()
            yield server
        finally:
            server.stop()


def healthz_answers(port: int, probes: int = 6) -> bool:
    """Whether each of `probes` fresh connections gets /healthz within 5 s (the
    kernel spreads them over the workers; one worker with every thread held fails)."""
    for _ in range(probes):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            connection.request("GET", "/healthz")
            if connection.getresponse().status != 200:
                return False
        except OSError:  # timed out: no thread took it
            return False
        finally:
            connection.close()
    return True


def keep_sending(clients: list[socket.socket], stop: threading.Event) -> None:
    """One byte a connection every 2 s: under WEB_BODY_IDLE_SECONDS, so never idle."""
    while not stop.wait(2.0):
        for client in clients:
            try:
                client.sendall(b"a")
            except OSError:
                pass


def test_a_head_over_64_kib_sent_slowly_holds_no_thread(served: Served) -> None:
    # Ten header lines of 7,000 bytes (gunicorn takes up to 100 of 8,190): past
    # HEAD_BYTES the main loop hands the unfinished head to a thread, which
    # waits for the rest until WEB_READ_SECONDS (120 s) after the request began.
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"X-Pad-%d: %s\r\n" % (n, b"p" * 7000) for n in range(10))
        + b"X-Slow: "
    )
    stop = threading.Event()
    with ExitStack() as stack:
        clients = []
        for _ in range(CONNECTIONS):
            client = stack.enter_context(socket.create_connection(("127.0.0.1", served.port)))
            client.sendall(head)
            clients.append(client)
            time.sleep(0.02)  # as clients arrive: every worker gets its share
        stack.callback(stop.set)
        threading.Thread(target=keep_sending, args=(clients, stop), daemon=True).start()
        stop.wait(3)
        assert healthz_answers(served.port)


def test_a_client_that_does_not_read_its_answer_holds_no_thread_for_ever(served: Served) -> None:
    # Anonymous GETs of a 3.9 MB static file (whitenoise serves them in the
    # coordinator) from clients with a tiny receive window that never read:
    # past what the kernel buffers, the thread's write blocks with no timeout
    # (the socket is blocking again after the head; gthread has no write limit).
    path = "/static/drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js.map"
    request = f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    with ExitStack() as stack:
        for _ in range(CONNECTIONS):
            client = stack.enter_context(socket.socket())
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            client.connect(("127.0.0.1", served.port))
            client.sendall(request)
            time.sleep(0.02)
        threading.Event().wait(3)
        assert healthz_answers(served.port)


@pytest.fixture(scope="module")
def served_with_1024_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """`serve` with the open-file limit a systemd unit gets by default (soft 1024;
    deploy/systemd/seed-coordinator.service sets no LimitNOFILE)."""
    workdir = tmp_path_factory.mktemp("review-edge-files")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with fresh_database() as (url, conninfo):
        server = Served(url, conninfo, workdir)
        resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
        try:
            server.start()  # gunicorn inherits the limit
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        try:
            yield server
        finally:
            server.stop()


@pytest.mark.skipif(
    resource.getrlimit(resource.RLIMIT_NOFILE)[0] < 8000, reason="the client needs 5,000 files"
)
def test_refused_connections_cannot_run_a_worker_out_of_files(
    served_with_1024_files: Served,
) -> None:
    # Connections that never finish their head count against worker_connections
    # (1,000 a worker, so at most ~1,000 sockets each); a refused request is
    # uncounted at once (nr_conns -= 1) while its socket lingers up to 2 s, so
    # a burst of them takes a worker past 1,024 files: accept() raises EMFILE
    # out of the main loop and the worker dies with every request it held.
    port = served_with_1024_files.port
    with ExitStack() as stack:
        for _ in range(2900):
            client = stack.enter_context(socket.create_connection(("127.0.0.1", port), 10))
            client.sendall(b"POST /admin/login/ HTTP/1.1\r\n")
        time.sleep(6)  # every worker has accepted its share from the backlog
        for _ in range(1500):
            client = stack.enter_context(socket.create_connection(("127.0.0.1", port), 10))
            client.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
        time.sleep(3)
    # The whole file: Fleet.log() keeps only its last 6,000 characters.
    log = (served_with_1024_files.workdir / "serve.log").read_text(errors="replace")
    assert "Too many open files" not in log and "Exception in worker process" not in log
