"""A hundred held bodies against a real `manage.py serve`: the coordinator keeps answering.

The coordinator runs as production runs it (`serve`: the buffering worker, 3
workers of 8 threads, its defaults), on 127.0.0.1, but for a short
WEB_BODY_IDLE_SECONDS so a stalled body's answer comes within the test.

A hundred connections each send a head and hold the connection without
sending the body: 8 MiB login forms with a forged `csrftoken` (CSRF's check
read each in a thread, with no timeout: 24 of them froze everything, /healthz
included), admin forms with a forged session cookie, batches with a forged
token, /healthz with a body, and slow clients trickling a head or a small body.
While every one of them is still open, /healthz and a node's lease answer; each
refused request has its answer without having sent its body, and the slow
clients are still being read, holding no thread. Heads over 64 KiB sent
slowly are refused by the main loop (they once went to a thread each, held
until WEB_READ_SECONDS).
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.support.fleet import ROOT, Fleet, fresh_database

pytestmark = pytest.mark.e2e

IDLE_SECONDS = 5  # WEB_BODY_IDLE_SECONDS for this server
ANSWER_SECONDS = 30  # generous: before the fix these never came at all
FORGED_TOKEN = "sn_" + "F" * 32
CSRF = "csrftoken=" + "c" * 32
FORM = "Content-Type: application/x-www-form-urlencoded"


class Served(Fleet):
    """The coordinator as `manage.py serve` starts it (migrates, then execs gunicorn)."""

    def start(self) -> None:
        log = (self.workdir / "serve.log").open("wb")
        env = self.env(
            DATA_DIR=str(self.workdir / "data"),
            WEB_BODY_IDLE_SECONDS=str(IDLE_SECONDS),
            PATH=str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        )
        command = [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{self.port}"]
        self.gunicorn = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            assert self.gunicorn.poll() is None, self.log("serve.log")
            try:
                urllib.request.urlopen(self.url + "/healthz", timeout=5).close()
                return
            except (urllib.error.URLError, OSError):
                time.sleep(0.2)
        raise AssertionError("serve did not come up:\n" + self.log("serve.log"))

    def whole_log(self) -> str:
        """All of serve.log (`log` keeps only its last 6,000 characters, which the
        refusals' lines fill)."""
        return (self.workdir / "serve.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("held-bodies")
    with fresh_database() as (url, conninfo):
        server = Served(url, conninfo, workdir)
        try:
            server.start()
            server.python(
                "from indexer.models import Group\n"
                "from seeding.models import SeedRange\n"
                "group = Group.objects.create(name='alt.test.bodies')\n"
                "SeedRange.objects.bulk_create(SeedRange(group=group, start_id=n * 1000 + 1,"
                " end_id=n * 1000 + 1000, next_id=n * 1000 + 1) for n in range(20))\n"
            )
            yield server
        finally:
            server.stop()


def held(stack: ExitStack, port: int, head: str) -> socket.socket:
    """A connection that has sent `head` and nothing of its body."""
    client = stack.enter_context(socket.create_connection(("127.0.0.1", port), ANSWER_SECONDS))
    client.sendall(head.encode())
    return client


def post_head(path: str, length: int, *headers: str, method: str = "POST") -> str:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", f"Content-Length: {length}"]
    return "\r\n".join([*lines, *headers, "", ""])


def status_of(client: socket.socket) -> int:
    line = client.makefile("rb").readline()
    assert line.startswith(b"HTTP/1.1 "), line
    return int(line[9:12])


def call(port: int, method: str, path: str, token: str = "", body: object = None) -> tuple:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=ANSWER_SECONDS)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    connection.request(method, path, data, headers)
    answer = connection.getresponse()
    content = answer.read()
    connection.close()
    return answer.status, json.loads(content) if content else None


def trickle(clients: list[socket.socket], data: bytes, stop: threading.Event) -> None:
    for index in range(len(data)):
        if stop.wait(1.0):
            return
        for client in clients:
            try:
                client.sendall(data[index : index + 1])
            except OSError:
                pass


def test_a_hundred_held_bodies_leave_healthz_and_a_lease_answering(served: Served) -> None:
    token = served.issue_token("quick").read_text().strip()
    port = served.port
    stop = threading.Event()
    with ExitStack() as stack:
        forms = [
            held(stack, port, post_head("/admin/login/", 8 << 20, f"Cookie: {CSRF}", FORM))
            for _ in range(40)
        ]
        forged_sessions = [
            held(stack, port, post_head("/admin/indexer/group/add/", 8 << 20,
                                        f"Cookie: {CSRF}; sessionid={'s' * 32}", FORM))
            for _ in range(20)
        ]  # fmt: skip
        forged_tokens = [
            held(stack, port, post_head("/api/v1/ranges/1/batch", 30 << 20,
                                        f"Authorization: Bearer {FORGED_TOKEN}"))
            for _ in range(20)
        ]  # fmt: skip
        probes = [
            held(stack, port, post_head("/healthz", 100 << 20, method="GET")) for _ in range(10)
        ]
        slow_heads = [held(stack, port, "POST /admin/login/ HTTP/1.1\r\n") for _ in range(5)]
        slow_bodies = [
            held(stack, port, post_head("/api/v1/ranges/1/heartbeat", 500_000,
                                        f"Authorization: Bearer {FORGED_TOKEN}"))
            for _ in range(5)
        ]  # fmt: skip
        dribble = threading.Thread(
            target=trickle, args=(slow_heads, b"Host: x\r\n" * 20, stop), daemon=True
        )
        dribble.start()
        stack.callback(stop.set)
        threading.Thread(target=trickle, args=(slow_bodies, b"x" * 100, stop), daemon=True).start()
        time.sleep(2)  # every held connection has reached the coordinator

        assert call(port, "GET", "/healthz")[0] == 200
        status, offer = call(port, "POST", "/api/v1/ranges/lease", token, {})
        assert status == 200 and offer["lease"], offer

        # Each refused request has its answer, though it never sent its body.
        assert {status_of(c) for c in forms} == {413}
        assert {status_of(c) for c in forged_sessions} == {413}
        assert {status_of(c) for c in forged_tokens} == {401}
        assert {status_of(c) for c in probes} == {413}
        # The slow clients are still being read (in the main loop: no thread).
        readable, _, _ = select.select(slow_heads + slow_bodies, [], [], 0)
        assert readable == []
        assert dribble.is_alive()
    log = served.whole_log()
    assert "Traceback" not in log and '" 500 ' not in log, log[-6000:]


def test_a_body_that_stops_arriving_frees_its_thread(served: Served) -> None:
    token = served.issue_token("stalling").read_text().strip()
    status, offer = call(served.port, "POST", "/api/v1/ranges/lease", token, {})
    assert status == 200 and offer["lease"], offer
    path = f"/api/v1/ranges/{offer['lease']['id']}/batch"
    with ExitStack() as stack:
        head = post_head(path, 2 << 20, f"Authorization: Bearer {token}",
                         "Content-Type: application/json")  # fmt: skip
        client = held(stack, served.port, head)
        client.sendall(b'{"files": [' + b" " * 100_000)  # then nothing more
        reply = client.makefile("rb")
        assert reply.readline().startswith(b"HTTP/1.1 400 ")
        answer = reply.read()  # the connection closes after the answer
    detail = json.loads(answer.partition(b"\r\n\r\n")[2])["detail"]
    assert f"no byte arrived for {IDLE_SECONDS} s" in detail, detail


def test_a_client_waiting_for_100_continue_is_told_to_go_on_once(served: Served) -> None:
    token = served.issue_token("polite").read_text().strip()
    status, offer = call(served.port, "POST", "/api/v1/ranges/lease", token, {})
    assert status == 200 and offer["lease"], offer
    lease = offer["lease"]
    body = json.dumps({"epoch": lease["epoch"]}).encode()
    head = post_head(f"/api/v1/ranges/{lease['id']}/heartbeat", len(body),
                     f"Authorization: Bearer {token}", "Content-Type: application/json",
                     "Expect: 100-continue", "Connection: close")  # fmt: skip
    with ExitStack() as stack:
        client = held(stack, served.port, head)
        reply = client.makefile("rb")
        assert reply.readline() == b"HTTP/1.1 100 Continue\r\n" and reply.readline() == b"\r\n"
        client.sendall(body)
        answer = reply.read()
    assert answer.startswith(b"HTTP/1.1 204 "), answer
    assert b"100 Continue" not in answer  # the thread does not say it again


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


def test_heads_over_64_kib_sent_slowly_hold_no_thread(served: Served) -> None:
    # Ten header lines of 7,000 bytes (gunicorn takes up to 100 of 8,190), then
    # a line that never ends: 150 connections, more than the 3 workers' 24 threads.
    head = (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
        + b"".join(b"X-Pad-%d: %s\r\n" % (n, b"p" * 7000) for n in range(10))
        + b"X-Slow: "
    )
    stop = threading.Event()
    with ExitStack() as stack:
        clients = []
        for _ in range(150):
            client = stack.enter_context(socket.create_connection(("127.0.0.1", served.port)))
            client.sendall(head)
            clients.append(client)
            time.sleep(0.02)  # as clients arrive: every worker gets its share
        stack.callback(stop.set)
        threading.Thread(target=keep_sending, args=(clients, stop), daemon=True).start()
        stop.wait(3)
        assert healthz_answers(served.port)
        clients[0].settimeout(ANSWER_SECONDS)
        assert status_of(clients[0]) == 431
    assert "Error handling request" not in served.whole_log()
