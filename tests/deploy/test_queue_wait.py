"""Work beyond capacity is told to wait: through a real `manage.py serve` with one
thread, an API call that waited longer than API_QUEUE_MAX_SECONDS for it gets
503 with Retry-After (core/queue_wait.py); a call that did not wait runs."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.e2e.test_startup import stop, wait_until_serving
from tests.support.fleet import ROOT, fresh_database
from tests.support.net import free_port

pytestmark = pytest.mark.e2e
HOLD = 4.0  # seconds the one thread is kept busy; the limit is 1 s


def serve(database_url: str, tmp_path: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(tmp_path / "data"),
        "SECRET_KEY": "test-queue-wait-key",
        "PYTHONPATH": str(ROOT),
        "API_QUEUE_MAX_SECONDS": "1",
    }
    command = [sys.executable, "manage.py", "serve", "--bind", f"127.0.0.1:{port}",
               "--workers", "1", "--threads", "1"]  # fmt: skip
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    wait_until_serving(process, f"http://127.0.0.1:{port}", tmp_path / "serve.log")
    return process, port


def hold_the_thread(port: int, conninfo: dict[str, Any]) -> threading.Thread:
    """A call that holds the one thread for HOLD s: it waits on a lock the test
    holds on the nodes' table (authentication reads it). A slow client would not
    do: the worker reads small requests whole before a thread takes them."""
    locked = threading.Event()

    def hold() -> None:
        with psycopg.connect(**conninfo) as conn:
            conn.execute("LOCK TABLE seed_node IN ACCESS EXCLUSIVE MODE")
            locked.set()
            time.sleep(HOLD)

    def blocked_call() -> None:
        locked.wait(10)
        ping(port, token="sn_" + "x" * 40)  # waits on the lock in the thread

    holder = threading.Thread(target=hold)
    holder.start()
    threading.Thread(target=blocked_call, daemon=True).start()
    return holder


def ping(port: int, token: str = "") -> tuple[int, dict[str, str], dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    conn.request("GET", "/api/v1/ping", headers=headers)
    response = conn.getresponse()
    body = json.loads(response.read())
    conn.close()
    return response.status, dict(response.getheaders()), body


def test_a_call_that_waited_for_a_thread_past_the_limit_is_told_to_retry(tmp_path: Path) -> None:
    with fresh_database() as (database_url, conninfo):
        process, port = serve(database_url, tmp_path)
        try:
            assert ping(port)[0] == 401  # served at once: no token
            slow = hold_the_thread(port, conninfo)
            time.sleep(1.0)  # the blocked call has the thread
            status, headers, body = ping(port)
            slow.join()
            after = ping(port)[0]
        finally:
            stop(process)
    assert status == 503, (status, body)
    assert body["error"] == "unavailable" and "over capacity" in body["detail"]
    assert headers["Retry-After"] == "5"
    assert after == 401  # the queue is empty again: the call runs (and has no token)
