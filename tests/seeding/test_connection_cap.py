"""The global cap on news-server connections (NNTP_MAX_CONNECTIONS), held in PostgreSQL.

Each open connection holds an advisory-lock slot on a database session of
its process's own: two sessions stand for two processes (or hosts); closing a
session is what a killed process does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from itertools import pairwise

import pytest
from django.test import override_settings

from indexer.connection_slots import DatabaseSlots
from indexer.newsserver import close_news_pool
from seeding.services import create_ranges
from tests.support.fleet import ROOT, fresh_database
from tests.support.news import overviews_url
from tests.support.nntpd import Article, NNTPServer
from usenet.nntp import PoolExhausted

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def test_a_full_cap_makes_a_caller_wait_then_refuses_and_a_dead_session_frees_its_slot() -> None:
    host_a, host_b = DatabaseSlots(1), DatabaseSlots(1)
    try:
        assert host_a.acquire(timeout=1) == 0
        started = time.monotonic()
        with pytest.raises(PoolExhausted, match="NNTP_MAX_CONNECTIONS"):
            host_b.acquire(timeout=0.5)
        assert time.monotonic() - started >= 0.5  # it waited for the bound
        host_a.close()  # the process holding the slot dies with its session
        assert host_b.acquire(timeout=1) == 0
        host_b.release(0)
        assert host_a.acquire(timeout=1) == 0  # released slots are free again
    finally:
        host_a.close()
        host_b.close()


def test_slots_held_in_one_process_are_distinct() -> None:
    slots = DatabaseSlots(3)
    try:
        assert sorted(slots.acquire(timeout=1) for _ in range(3)) == [0, 1, 2]
        with pytest.raises(PoolExhausted):
            slots.acquire(timeout=0)
    finally:
        slots.close()


def test_the_relay_answers_503_with_retry_after_while_other_hosts_hold_every_slot(
    news_group, node_client
) -> None:
    group = news_group("alt.binaries.capped", 1, 5_000)
    create_ranges(group, [(1, 1_000)])
    node = node_client()
    lease = node.lease()
    other_host = DatabaseSlots(1)
    other_host.acquire(timeout=1)
    try:
        with override_settings(NNTP_MAX_CONNECTIONS=1, NEWS_POOL_WAIT_SECONDS=0.3):
            close_news_pool()
            response = node.get(overviews_url(lease))
            assert response.status_code == 503
            assert response.json()["error"] == "unavailable"
            assert response["Retry-After"]
            other_host.close()
            assert node.get(overviews_url(lease)).status_code == 200
    finally:
        other_host.close()
        close_news_pool()


# Run in each of two processes: three threads each borrow a connection for a
# while; the moments each held one are printed (CLOCK_MONOTONIC is shared).
BORROWER = """
import json, threading, time
import django
django.setup()
from indexer.newsserver import news_pool

held = []
def borrow():
    with news_pool().connection() as client:
        client.group("alt.binaries.cap")
        start = time.monotonic()
        time.sleep(0.3)
        held.append((start, time.monotonic()))

threads = [threading.Thread(target=borrow) for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
print(json.dumps(held))
"""


def test_two_processes_never_pass_the_cap_together() -> None:
    with NNTPServer() as server, fresh_database() as (database_url, _):
        server.groups.clear()
        server.add_group("alt.binaries.cap", {1: Article(subject="x")})
        env = {
            "DATABASE_URL": database_url,
            "SECRET_KEY": "test-cap",
            "NEWS_SERVER_URL": f"nntp://127.0.0.1:{server.port}/?connections=3",
            "NNTP_MAX_CONNECTIONS": "2",
            "NEWS_POOL_WAIT_SECONDS": "30",
            "DJANGO_SETTINGS_MODULE": "coordinator.settings",
            "PATH": "/usr/bin:/bin",
        }
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", BORROWER],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        held = []
        for process in processes:
            out, err = process.communicate(timeout=60)
            assert process.returncode == 0, err
            held.extend(json.loads(out))
    assert len(held) == 6
    # The most borrowings open at one moment, over both processes.
    events = sorted([(start, 1) for start, _ in held] + [(end, -1) for _, end in held])
    open_now, most = 0, 0
    for _, change in events:
        open_now += change
        most = max(most, open_now)
    assert most == 2
    # Six borrowings of 0.3 s through two slots take at least three rounds.
    spans = sorted(held)
    assert spans[-1][1] - spans[0][0] >= 0.85
    assert all(a[0] <= b[0] for a, b in pairwise(spans))
