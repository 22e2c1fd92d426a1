"""A snapshot upload slower than the worker timeout completes through a real `manage.py serve`.

gunicorn's sync workers were killed by the arbiter `--timeout` seconds into a long
request; gthread workers keep reporting alive while a thread streams. The test
starts `serve` with a 2-second timeout and sends a snapshot over about 8 seconds.
"""

from __future__ import annotations

import http.client
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from tests.support.lanes import ARTICLE, GROUP, held_lane
from tests.support.net import free_port
from tests.support.snapshots import padded_files, window_snapshot

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 2
PIECES, PIECE, PAUSE = 8, 64 * 1024, 1.0  # about 8 s in all: far more than TIMEOUT

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[int]:
    params = connection.get_connection_params()
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{params.get('user', 'postgres')}@/{settings.DATABASES['default']['NAME']}",
        "PGHOST": str(params["host"]),
        "PGPORT": str(params.get("port") or 5432),
        "DATA_DIR": str(tmp_path / "var"),
        "SECRET_KEY": "test-workers-key",
        "DB_CONN_MAX_AGE": "0",
    }
    log = open(tmp_path / "serve.log", "wb")
    process = subprocess.Popen(
        [
            sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}",
            "--workers", "1", "--threads", "2", "--timeout", str(TIMEOUT),
        ],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:  # until a worker answers (the master listens before one is up)
            try:
                probe = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                probe.request("GET", "/healthz")
                if probe.getresponse().status == 200:
                    break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, (
                    tmp_path / "serve.log"
                ).read_text()
                time.sleep(0.1)  # waiting for another process to listen
        yield port
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


# A snapshot of the lane (the coordinator checks what it stores), not compressed.
BODY = window_snapshot(GROUP, padded_files(ARTICLE, PIECES * PIECE), level=0)


def slowly() -> Iterator[bytes]:
    step = -(-len(BODY) // PIECES)
    for start in range(0, len(BODY), step):
        yield BODY[start : start + step]
        time.sleep(PAUSE)  # a slow node: the point of the test


def test_a_snapshot_upload_longer_than_the_worker_timeout_succeeds(served: int) -> None:
    node, path = held_lane()
    conn = http.client.HTTPConnection("127.0.0.1", served, timeout=60)
    started = time.monotonic()
    conn.request(
        "PUT",
        f"{path}&next=5",
        body=slowly(),
        headers={
            "Authorization": f"Bearer {node.token}",
            "Content-Type": "application/gzip",
            "Content-Length": str(len(BODY)),
        },
    )
    response = conn.getresponse()
    assert response.status == 204, response.read()
    response.read()
    assert time.monotonic() - started > 2 * TIMEOUT
    conn.request("GET", path, headers={"Authorization": f"Bearer {node.token}"})
    fetched = conn.getresponse()
    assert fetched.status == 200
    assert fetched.read() == BODY
