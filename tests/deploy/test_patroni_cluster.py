"""The test cluster of tests/support/patroni.py, on deploy/patroni's files as they are.

One etcd and two PostgreSQL members under Patroni: a leader is elected, the
other member is its synchronous standby, a commit on the leader is read on
the standby, the coordinator's multi-host DATABASE_URL reaches the leader, and
stopping the cluster leaves no process behind.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest
import yaml

from tests.support.patroni import PATRONI_YML, PatroniCluster, alive, patroni_cluster  # noqa: F401

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PATRONI_LOOP_SECONDS = yaml.safe_load(PATRONI_YML.read_text())["bootstrap"]["dcs"]["loop_wait"]


def test_a_leader_is_elected_and_the_other_member_is_its_synchronous_standby(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    leader = patroni_cluster.wait_for_leader()
    standby = patroni_cluster.wait_for_sync_standby()
    assert {leader, standby} == set(patroni_cluster.members)
    assert patroni_cluster.accepts_writes(leader)
    assert not patroni_cluster.accepts_writes(standby)
    with patroni_cluster.connect(leader) as conn:
        settings = dict(
            conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN "
                "('synchronous_commit', 'synchronous_standby_names', 'listen_addresses')"
            ).fetchall()
        )
    assert settings["synchronous_commit"] == "on"
    assert standby in settings["synchronous_standby_names"]
    assert settings["listen_addresses"] == "127.0.0.1"  # loopback only


def test_the_rest_api_refuses_a_switchover_without_its_password(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    leader = patroni_cluster.wait_for_leader()
    port = patroni_cluster.members[leader].api_port
    body = json.dumps({"leader": leader}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/switchover", data=body)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401
    assert patroni_cluster.wait_for_leader() == leader


def test_a_write_on_the_leader_is_read_on_the_replica(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    leader = patroni_cluster.wait_for_leader()
    replica = patroni_cluster.wait_for_sync_standby()
    with psycopg.connect(**patroni_cluster.conninfo(leader), autocommit=True) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS fixture_check (note text)")
        conn.execute("INSERT INTO fixture_check VALUES ('written on the leader')")
    deadline = time.monotonic() + 10
    rows: list[tuple[str]] = []
    while not rows and time.monotonic() < deadline:
        with psycopg.connect(**patroni_cluster.conninfo(replica), autocommit=True) as conn:
            rows = conn.execute("SELECT note FROM fixture_check").fetchall()
        time.sleep(0.1)
    assert rows == [("written on the leader",)]


def test_the_multi_host_url_reaches_the_leader_whichever_member_it_names_first(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    leader = patroni_cluster.wait_for_leader()
    url = patroni_cluster.database_url()
    assert url.count("127.0.0.1:") == 2 and "target_session_attrs=read-write" in url
    with psycopg.connect(url, autocommit=True) as conn:
        port = conn.execute("SELECT inet_server_port()").fetchone()
    assert port == (patroni_cluster.members[leader].port,)


def test_a_paused_replica_falls_behind_and_catches_up_when_resumed(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    leader = patroni_cluster.wait_for_leader()
    replica = patroni_cluster.wait_for_sync_standby()
    patroni_cluster.pause_replay(replica)
    try:
        with psycopg.connect(**patroni_cluster.conninfo(leader), autocommit=True) as conn:
            conn.execute("CREATE TABLE IF NOT EXISTS lag_check (n int)")
            conn.execute("INSERT INTO lag_check SELECT generate_series(1, 1000)")
        # Past one loop of the replica's Patroni, which resumes a paused replay
        # unless the cluster is in maintenance mode (pause_replay puts it there).
        time.sleep(PATRONI_LOOP_SECONDS + 1)
        behind, seconds = patroni_cluster.replay_lag(replica)
        assert behind > 0 and seconds >= PATRONI_LOOP_SECONDS, (behind, seconds)
    finally:
        patroni_cluster.resume_replay(replica)
    deadline = time.monotonic() + 10
    while patroni_cluster.replay_lag(replica) != (0, 0.0) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert patroni_cluster.replay_lag(replica) == (0, 0.0)


def test_stopping_the_cluster_leaves_no_process_and_no_directory() -> None:
    cluster = PatroniCluster(members=2).start()
    leader = cluster.wait_for_leader()
    pids = [p.pid for p in [cluster.etcd, *(m.process for m in cluster.members.values())] if p]
    postmasters = [m.postmaster_pid() for m in cluster.members.values()]
    assert all(postmasters), postmasters
    cluster.kill_postmaster(leader)  # a fault mid-test: Patroni starts another one
    cluster.stop()
    assert not cluster.root.exists()
    assert [pid for pid in [*pids, *postmasters] if pid and alive(pid)] == []
    assert os.path.exists("/proc/self")  # /proc is read, so the check above could fail


# A test process that starts a cluster's processes the way it starts etcd and Patroni
# (sessions of their own, so its death does not reach them), then waits to be killed.
ORPHANED = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.patroni import PatroniCluster
cluster = PatroniCluster(members=1)
for _ in range(2):
    process = cluster._spawn(["sleep", "600"], cluster.base_env(), cluster.root / "sleep.log")
    print(process.pid, flush=True)
print(cluster.root, flush=True)
time.sleep(600)
"""


def test_a_test_process_killed_mid_test_leaves_no_process_and_no_directory() -> None:
    """SIGKILLed, the test process runs no teardown; the cluster's reaper does it, so the
    next test of the run does not share the machine with a leftover cluster."""
    test = subprocess.Popen(
        [sys.executable, "-c", ORPHANED, str(ROOT)], stdout=subprocess.PIPE, text=True
    )
    assert test.stdout is not None
    started = [int(test.stdout.readline()) for _ in range(2)]
    root = Path(test.stdout.readline().strip())
    assert root.exists() and all(alive(pid) for pid in started)
    test.kill()
    test.wait(10)
    deadline = time.monotonic() + 30
    while (root.exists() or any(alive(pid) for pid in started)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [pid for pid in started if alive(pid)] == []
    assert not root.exists()


def test_through_pgbouncer_in_session_mode_the_url_finds_the_leader_and_locks_hold(
    patroni_cluster: PatroniCluster,  # noqa: F811
) -> None:
    """deploy/patroni/pgbouncer.ini beside each member: the multi-host URL over the
    PgBouncers reaches the leader, before and after a switchover, and a session's
    advisory lock outlives its transactions (what the coordinator's startup lock,
    news-server slots and upload guards need)."""
    url = patroni_cluster.start_pgbouncers()
    leader = patroni_cluster.wait_for_leader()
    ports = [m.bouncer_port for m in patroni_cluster.members.values()]
    assert all(f"127.0.0.1:{port}" in url for port in ports)
    with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as other:
        assert holder.info.port in ports  # through a PgBouncer, not PostgreSQL itself
        row = holder.execute("SELECT inet_server_port(), pg_try_advisory_lock(28, 1)").fetchone()
        assert row == (patroni_cluster.members[leader].port, True)
        holder.commit()  # the transaction ends; the session, and its lock, go on
        holder.execute("SELECT 1").fetchone()
        holder.commit()
        taken = other.execute("SELECT pg_try_advisory_lock(28, 1)").fetchone()
        assert taken == (False,)
    _, new_leader = patroni_cluster.switchover()
    patroni_cluster.wait_for_replica(leader, timeout=90)
    deadline = time.monotonic() + 30
    port = None
    while port != (patroni_cluster.members[new_leader].port,) and time.monotonic() < deadline:
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                port = conn.execute("SELECT inet_server_port()").fetchone()
        except psycopg.OperationalError:
            port = None
        time.sleep(0.2)
    assert port == (patroni_cluster.members[new_leader].port,)
