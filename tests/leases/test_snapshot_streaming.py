"""Snapshots of hundreds of megabytes through a real gunicorn worker, in bounded memory.

The coordinator runs under gunicorn in a subprocess against the test
database; the body is a generator sent over a real HTTP connection. The
worker's peak resident memory (VmHWM in /proc) must grow far less than the
200 MB that went through it, both ways.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from leases import services
from tests.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.net import free_port
from tests.support.snapshots import file_chunks, snapshot_file

MB = 1 << 20
BIG = 200 * MB
MEMORY_GROWTH_LIMIT = 40 * MB
ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()]


class Coordinator:
    def __init__(self, tmp_path: Path) -> None:
        params = connection.get_connection_params()
        self.port = free_port()
        self.snapshots = tmp_path / "snapshots"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "coordinator.settings",
            "DATABASE_URL": f"postgres://{params.get('user', 'postgres')}@/{settings.DATABASES['default']['NAME']}",
            "PGHOST": str(params["host"]),
            "PGPORT": str(params.get("port") or 5432),
            "SNAPSHOT_DIR": str(self.snapshots),
            "SECRET_KEY": "test-snapshot-streaming-key",
            "DB_CONN_MAX_AGE": "0",
        }
        gunicorn = shutil.which("gunicorn", path=str(Path(sys.executable).parent))
        assert gunicorn
        self.log = open(tmp_path / "gunicorn.log", "wb")
        self.process = subprocess.Popen(
            [
                gunicorn,
                "coordinator.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "1",
                "--timeout",
                "300",
            ],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    # The fixture never sees this object, so stop gunicorn here.
                    self.process.kill()
                    self.process.wait()
                    self.log.close()
                    raise AssertionError((tmp_path / "gunicorn.log").read_text()) from None
                time.sleep(0.05)  # waiting for another process to listen, not moving time

    def worker(self) -> int:
        (pid,) = children(self.process.pid)
        return pid

    def connect(self) -> http.client.HTTPConnection:
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


@pytest.fixture
def coordinator(tmp_path):
    server = Coordinator(tmp_path)
    yield server
    server.stop()


class Snapshot:
    """A valid snapshot of the test lane of about `size` bytes, written once to disk."""

    def __init__(self, directory: Path, size: int, tag: str) -> None:
        self.path = snapshot_file(directory / f"{tag}.gz", GROUP, ARTICLE, size, tag)
        self.size = self.path.stat().st_size
        self.digest = hashlib.sha256(self.path.read_bytes()).hexdigest()

    def chunks(self, limit: int | None = None) -> Iterator[bytes]:
        """Its bytes in 1 MB pieces (only the first `limit` bytes, if given)."""
        sent = 0
        for piece in file_chunks(self.path, MB):
            if limit is not None and sent + len(piece) > limit:
                yield piece[: limit - sent]
                return
            sent += len(piece)
            yield piece


GROUP = "alt.binaries.big"
ARTICLE = 1_500  # of the lane's range, 1,000..9,999


def held_lane():
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group, start_id=1_000, end_id=9_999)
    node = NodeFactory()
    offer = services.lease_lane(node.id, "history")
    assert offer.lease is not None
    # Handed out: a window holds only articles of the ranges its lane handed out.
    assert services.next_lane_range(node.id, group.id, "history", offer.lease.epoch)
    path = f"/api/v1/groups/{group.id}/lanes/history/snapshot?epoch={offer.lease.epoch}"
    return node, path


def put(server, node, path, body, length=None, next_id=777):
    conn = server.connect()
    headers = {"Authorization": f"Bearer {node.token}", "Content-Type": "application/gzip"}
    if length is not None:
        headers["Content-Length"] = str(length)
    conn.request(
        "PUT", f"{path}&next={next_id}", body=body, headers=headers, encode_chunked=length is None
    )
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, payload


def fetch(server, node, path):
    conn = server.connect()
    conn.request("GET", path, headers={"Authorization": f"Bearer {node.token}"})
    response = conn.getresponse()
    h = hashlib.sha256()
    size = 0
    while piece := response.read(MB):
        h.update(piece)
        size += len(piece)
    conn.close()
    return response, size, h.hexdigest()


def test_a_200_mb_snapshot_streams_both_ways_in_bounded_memory(coordinator, tmp_path):
    # Checked as it streams (the format, the lane's articles), still in bounded memory.
    big = Snapshot(tmp_path, BIG, "big")
    node, path = held_lane()
    # warm the worker up (Django loaded, a connection made) before measuring
    response, _size, _digest = fetch(coordinator, node, path)
    assert response.status == 404
    worker = coordinator.worker()
    before = peak_rss(worker)

    status, payload = put(coordinator, node, path, big.chunks(), length=big.size)
    assert status == 204, payload
    response, size, digest = fetch(coordinator, node, path)
    assert response.status == 200
    assert response.getheader("Content-Length") == str(big.size)
    assert response.getheader("X-Snapshot-Next") == "777"
    assert size == big.size >= BIG
    assert digest == big.digest

    growth = peak_rss(worker) - before
    print(f"worker peak RSS {before / MB:.1f} MB before, grew {growth / MB:.1f} MB")
    assert growth < MEMORY_GROWTH_LIMIT, f"peak RSS grew by {growth / MB:.1f} MB"
    assert not list(coordinator.snapshots.glob("*.part"))


def test_a_chunked_upload_is_stored_whole(coordinator, tmp_path):
    chunked = Snapshot(tmp_path, 5 * MB, "chunked")
    node, path = held_lane()
    status, payload = put(coordinator, node, path, chunked.chunks(), next_id=9)
    assert status == 204, payload
    response, size, digest = fetch(coordinator, node, path)
    assert (size, digest) == (chunked.size, chunked.digest)
    assert response.getheader("X-Snapshot-Next") == "9"


def test_an_interrupted_upload_keeps_the_old_snapshot(coordinator, tmp_path):
    old, new = Snapshot(tmp_path, 2 * MB, "old"), Snapshot(tmp_path, 10 * MB, "new")
    node, path = held_lane()
    status, _ = put(coordinator, node, path, old.chunks(), length=old.size, next_id=100)
    assert status == 204
    # a client that promises 50 MB, sends 5 and goes away
    sock = socket.create_connection(("127.0.0.1", coordinator.port))
    head = (
        f"PUT {path}&next=200 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {node.token}\r\nContent-Type: application/gzip\r\n"
        f"Content-Length: {50 * MB}\r\n\r\n"
    )
    sock.sendall(head.encode())
    for piece in new.chunks(limit=5 * MB):
        sock.sendall(piece)
    sock.shutdown(socket.SHUT_WR)
    sock.recv(65536)  # the worker answers (or closes) once it sees the body end short
    sock.close()
    response, size, digest = fetch(coordinator, node, path)
    assert response.status == 200
    assert response.getheader("X-Snapshot-Next") == "100"
    assert (size, digest) == (old.size, old.digest)
    assert not list(coordinator.snapshots.glob("*.part"))
