"""Slow clients: fifty bodies at a byte a second, and transfers longer than the worker timeout.

The coordinator runs as `manage.py serve` runs it (`gunicorn_arguments`: its
worker class, workers and threads), with a 2-second `--timeout`:

- fifty connections send a heartbeat's head and then its body at a byte a
  second; meanwhile another node's lease call is answered at once (a thread is
  taken only by a whole request: core/gunicorn_worker.py), and every
  slow call is answered in the end;
- a snapshot of a few hundred megabytes is uploaded and downloaded, each
  throttled to last several times the worker timeout, and arrives intact.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest
from django.conf import settings

from core.management.commands.serve import gunicorn_arguments
from tests.chaos import harness
from tests.chaos.clocks import call
from tests.support.fleet import BIN, LEASE_TTL_SECONDS, ROOT, Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.snapshots import file_chunks, snapshot_file

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

TIMEOUT = 2  # gunicorn's --timeout: every transfer below lasts several times this
SLOW_CLIENTS = 50
SLOW_BODY = 20  # bytes, one a second
SNAPSHOT_MB, TRANSFER_SECONDS = 200, 8.0


class ServedFleet(Fleet):
    """The coordinator under gunicorn as `manage.py serve` starts it."""

    def start(self) -> None:
        self.manage("migrate", "--no-input", "-v", "0")
        log = (self.workdir / "gunicorn.log").open("wb")
        arguments = gunicorn_arguments(
            str(BIN / "gunicorn"),
            f"127.0.0.1:{self.port}",
            settings.WEB_WORKERS,
            settings.WEB_THREADS,
            TIMEOUT,
        )
        self.gunicorn = subprocess.Popen(
            arguments,
            cwd=ROOT,
            env=self.env(LEASE_TTL_SECONDS=str(LEASE_TTL_SECONDS), **self.server_env),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + 120  # workers boot slowly on a loaded CI box
        while time.monotonic() < deadline:
            assert self.gunicorn.poll() is None, self.log("gunicorn.log")
            try:
                probe = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                probe.request("GET", "/healthz")
                if probe.getresponse().status == 200:
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("gunicorn did not come up:\n" + self.log("gunicorn.log"))


@contextmanager
def served(posted: InnServer, workdir: Path) -> Iterator[ServedFleet]:
    with fresh_database() as (url, conninfo):
        fleet = ServedFleet(url, conninfo, workdir, news_server_url=posted.url)
        fleet.server_env = {"SNAPSHOT_DIR": str(workdir / "snapshots")}
        try:
            fleet.start()
            fleet.plan(harness.GROUPS, harness.PLANNED_DAYS, harness.RANGE_ARTICLES)
            yield fleet
        finally:
            fleet.stop()


def record(name: str, figures: dict[str, object]) -> None:
    out = Path(os.environ.get("CHAOS_FIGURES", "/tmp")) / f"slow-clients-{name}.json"
    out.write_text(json.dumps(figures))


def test_fifty_bodies_at_a_byte_a_second_do_not_hold_up_a_lease_call(
    posted: InnServer, tmp_path: Path
) -> None:
    with served(posted, tmp_path) as fleet, ExitStack() as stack:
        slow = fleet.issue_token("slow").read_text().strip()
        quick = fleet.issue_token("quick").read_text().strip()
        status, offer = call(fleet.url, slow, "/ranges/lease")
        assert status == 200 and offer["lease"], offer
        lease = offer["lease"]
        body = json.dumps({"epoch": lease["epoch"]}).ljust(SLOW_BODY).encode()
        head = (
            f"POST /api/v1/ranges/{lease['id']}/heartbeat HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {slow}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        clients = []
        for _ in range(SLOW_CLIENTS):
            client = stack.enter_context(socket.create_connection(("127.0.0.1", fleet.port), 60))
            client.sendall(head)
            clients.append(client)
        dribble = threading.Thread(target=send_slowly, args=(clients, body), daemon=True)
        dribble.start()
        time.sleep(3)  # every slow call has sent its head and is into its body
        began = time.monotonic()
        status, offer = call(fleet.url, quick, "/ranges/lease")
        answered_in = time.monotonic() - began
        assert status == 200 and offer["lease"], offer
        slow_done = not dribble.is_alive()
        dribble.join(SLOW_BODY + 30)
        answers = [client.makefile("rb").readline() for client in clients]
        record("lease", {"answered_in": round(answered_in, 2), "slow_answers": len(answers)})
        # Answered while the slow bodies were still coming (a plain gthread
        # worker answered it only once they were all in: 17 s).
        assert not slow_done, answered_in
        # Each slow call answered once its body is in: 204, or 409 if its lease
        # went quiet meanwhile (it is not heartbeated while the bodies crawl).
        statuses = {answer[9:12] for answer in answers}
        assert len(answers) == SLOW_CLIENTS and statuses <= {b"204", b"409"}, set(answers)


def send_slowly(clients: list[socket.socket], body: bytes) -> None:
    for index in range(len(body)):
        for client in clients:
            client.sendall(body[index : index + 1])
        time.sleep(1.0)


def test_a_snapshot_transfer_longer_than_the_worker_timeout_arrives_whole(
    posted: InnServer, tmp_path: Path
) -> None:
    with served(posted, tmp_path) as fleet:
        node = fleet.issue_token("windower").read_text().strip()
        status, offer = call(fleet.url, node, "/groups/lease", {"lane": "history"})
        assert status == 200 and offer["lease"], offer
        lease = offer["lease"]
        path = (
            f"/api/v1/groups/{lease['group']['id']}/lanes/history/snapshot?epoch={lease['epoch']}"
        )
        # A snapshot of the lane (the coordinator checks what it stores), files at
        # an article of its first range, stored blocks: SNAPSHOT_MB on the wire.
        status, handed = call(
            fleet.url, node, f"/groups/{lease['group']['id']}/lanes/history/next",
            {"epoch": lease["epoch"]},
        )  # fmt: skip
        assert status == 200 and handed["range"], handed
        snapshot = snapshot_file(
            tmp_path / "window.gz", lease["group"]["name"], handed["range"]["start"],
            SNAPSHOT_MB << 20,
        )  # fmt: skip
        length = snapshot.stat().st_size
        sent = hashlib.sha256()
        pause = TRANSFER_SECONDS / SNAPSHOT_MB

        def pieces() -> Iterator[bytes]:
            for chunk in file_chunks(snapshot):
                sent.update(chunk)
                yield chunk
                time.sleep(pause)

        headers = {"Authorization": f"Bearer {node}", "Content-Type": "application/gzip"}
        upload = http.client.HTTPConnection("127.0.0.1", fleet.port, timeout=60)
        began = time.monotonic()
        upload.request(
            "PUT",
            f"{path}&next=1",
            pieces(),
            {**headers, "Content-Length": str(length)},
        )
        answer = upload.getresponse()
        upload_seconds = time.monotonic() - began
        assert answer.status == 204, answer.read()[:500]
        download = http.client.HTTPConnection("127.0.0.1", fleet.port, timeout=60)
        began = time.monotonic()
        download.request("GET", path, headers=headers)
        got = download.getresponse()
        assert got.status == 200, got.read(500)
        received, size = hashlib.sha256(), 0
        while chunk := got.read(1 << 20):
            received.update(chunk)
            size += len(chunk)
            time.sleep(pause)
        download_seconds = time.monotonic() - began
        record(
            "transfer",
            {
                "upload_seconds": round(upload_seconds, 1),
                "download_seconds": round(download_seconds, 1),
            },
        )
        assert min(upload_seconds, download_seconds) > 2 * TIMEOUT
        assert size == length and received.digest() == sent.digest()
        assert "WORKER TIMEOUT" not in fleet.log("gunicorn.log")
