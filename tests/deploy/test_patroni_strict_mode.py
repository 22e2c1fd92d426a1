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

LOOP = 10  # patroni.yml's loop_wait: Patroni acts on a lost standby within it


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

        cluster.kill_member(standby)
        time.sleep(LOOP + 2)  # until Patroni's next loop a commit may still wait
        took, notices = commit(cluster, leader, limit=10)
        assert took < 2 and notices == [], (took, notices)

        cluster.patronictl("edit-config", "--set", "synchronous_mode_strict=true", "--force")
        time.sleep(LOOP + 2)  # Patroni applies it in its loop
        took, notices = commit(cluster, leader, limit=5)
        assert took >= 5, took  # it waited for a standby until cancelled
        assert any("synchronous replication" in n for n in notices), notices

        cluster.start_member(standby)
        cluster.wait_for_replica(standby, timeout=90)
        assert cluster.wait_for_sync_standby(timeout=60) == standby
        took, notices = commit(cluster, leader, limit=10)
        assert took < 2 and notices == [], (took, notices)
