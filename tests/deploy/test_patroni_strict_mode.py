"""What docs/deploy.md says of `synchronous_mode_strict`, on the test cluster.

Two members in synchronous mode; the synchronous standby is lost whole.
Strict off (deploy/patroni/patroni.yml as shipped): Patroni lets the primary
go on alone, so a write commits at once again after Patroni's loop. Strict on
(`patronictl edit-config`): a commit waits for a standby that is not there,
until cancelled (then PostgreSQL keeps it, on the primary only, with a
warning), and commits return at once again when the standby is back.
"""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.support.patroni import PatroniCluster

pytestmark = pytest.mark.slow

ACT_TIMEOUT = 60  # Patroni acts within loop_wait (10 s) on a quiet machine; slower on a loaded one


def sync_names(cluster: PatroniCluster, leader: str) -> str:
    with cluster.connect(leader) as conn:
        row = conn.execute("SHOW synchronous_standby_names").fetchone()
    assert row is not None
    return str(row[0])


def until_patroni_sets(cluster: PatroniCluster, leader: str, waiting: bool) -> None:
    """Until Patroni's loop has set synchronous_standby_names on the leader: to a
    standby (`waiting`: commits wait for one), or to none (the primary goes on alone).
    A fixed sleep of one loop_wait fails when a loop runs late on a loaded machine."""
    deadline = time.monotonic() + ACT_TIMEOUT
    while bool(sync_names(cluster, leader)) != waiting:
        assert time.monotonic() < deadline, sync_names(cluster, leader)
        time.sleep(0.2)


def commit(cluster: PatroniCluster, leader: str, limit: float) -> tuple[float, list[str]]:
    """An INSERT's commit on the leader: the seconds it took and the server's warnings.
    One still waiting after `limit` seconds is cancelled."""
    notices: list[str] = []
    with psycopg.connect(**cluster.conninfo(leader), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS strict_check (at timestamptz)")
        conn.add_notice_handler(lambda notice: notices.append(str(notice.message_primary)))
        pid = conn.info.backend_pid
        began = time.monotonic()
        writer = threading.Thread(
            target=conn.execute, args=("INSERT INTO strict_check VALUES (now())",), daemon=True
        )
        writer.start()
        writer.join(limit)
        if writer.is_alive():
            with cluster.connect(leader) as admin:
                admin.execute("SELECT pg_cancel_backend(%s)", [pid])
            writer.join(10)
        return time.monotonic() - began, notices


def test_strict_off_the_primary_goes_on_alone_and_strict_on_it_waits_for_a_standby() -> None:
    with PatroniCluster(members=2) as cluster:
        leader = cluster.wait_for_leader()
        standby = cluster.wait_for_sync_standby()

        assert sync_names(cluster, leader)  # a commit waits for the standby
        cluster.kill_member(standby)
        until_patroni_sets(cluster, leader, waiting=False)  # until then a commit may wait
        took, notices = commit(cluster, leader, limit=10)
        assert took < 2 and notices == [], (took, notices)

        cluster.patronictl("edit-config", "--set", "synchronous_mode_strict=true", "--force")
        until_patroni_sets(cluster, leader, waiting=True)  # Patroni applies it in its loop
        took, notices = commit(cluster, leader, limit=5)
        assert took >= 5, took  # it waited for a standby until cancelled
        assert any("synchronous replication" in n for n in notices), notices

        cluster.start_member(standby)
        cluster.wait_for_replica(standby, timeout=90)
        assert cluster.wait_for_sync_standby(timeout=60) == standby
        took, notices = commit(cluster, leader, limit=10)
        assert took < 2 and notices == [], (took, notices)
