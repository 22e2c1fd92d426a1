"""Clock skew: a node or a coordinator host whose clock is hours off changes nothing.

Lease times are the database's: `heartbeat_at` is PostgreSQL's now(), and a
lease is quiet when it is older than the TTL by that same clock. No time a
node sends, and no host's own clock, takes part. The agent schedules
heartbeats, batches, backoff and Retry-After waits by the monotonic clock and
by durations the coordinator names. Skewed processes run under libfaketime
(tests/chaos/clocks.py):

- a whole fleet run with the window agent's clock 5 hours ahead and a range
  agent's 5 hours behind: the reference catalog, and no lease ever refused;
- a skewed agent that heartbeats keeps its range for three TTLs while another
  node asks for leases all along; frozen (SIGSTOP), its range passes on after
  the TTL, not earlier, not hours later;
- two coordinator hosts, one 5 hours ahead and one 5 hours behind, agree on a
  lease's expiry; and the ahead host's upkeep leaves the snapshot upload in
  flight on the other host alone (it judged `.part` files by its own clock).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.chaos import harness
from tests.chaos.clocks import call, skewed
from tests.chaos.harness import Outcome
from tests.e2e.fleet import LEASE_TTL_SECONDS, Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.snapshots import window_snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

HOURS = 5
RETIRE_SLACK = (
    10.0  # a lease call sweeps whenever its claim finds nothing (a loaded CI box is slow)
)


@pytest.fixture(scope="module")
def skewed_run(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    workdir = tmp_path_factory.mktemp("clock-skew")
    outcome = harness.run_fleet(
        posted,
        workdir,
        {},
        agent_env={"window": skewed(HOURS), "ranges-1": skewed(-HOURS)},
    )
    outcome.extra["logs"] = {
        path.stem: path.read_text(errors="replace") for path in workdir.glob("*.log")
    }
    return outcome


def test_agents_hours_ahead_and_behind_index_the_reference_catalog(
    skewed_run: Outcome, reference: Outcome
) -> None:
    logs = skewed_run.extra["logs"]
    # The skew is real: the skewed agents stamp their log lines hours off.
    assert stamp_offset(logs["window"]) > (HOURS - 1) * 3600, logs["window"][:300]
    assert stamp_offset(logs["ranges-1"]) < -(HOURS - 1) * 3600, logs["ranges-1"][:300]
    harness.assert_same_outcome(skewed_run, reference)
    for name, text in logs.items():
        # No call about a range or lane in work was refused as another node's
        # (a heartbeat racing its range's finish may be refused: not counted).
        assert " lost: " not in text, (name, text[-3000:])
    assert skewed_run.extra["stuck_leases"] == []
    assert skewed_run.extra["held_lanes"] == []
    assert skewed_run.extra["exits"] == dict.fromkeys(skewed_run.extra["exits"], 0)
    assert skewed_run.extra["server_errors"] == []


def stamp_offset(log: str) -> float:
    """Seconds between the first line's stamp and now (the agent was started just before)."""
    stamp = log.split(",", 1)[0]
    return time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S")) - time.time()


# --- a skewed agent that heartbeats, then goes quiet --------------------------------


def held_range(fleet: Fleet, node: str) -> tuple[int, int] | None:
    rows = fleet.sql(
        "SELECT r.id, r.epoch FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
        "WHERE n.name = %s AND r.status = 'leased' AND r.next_id > r.start_id",
        [node],
    )
    return rows[0] if rows else None


def wait_for(what: str, check: Any, fleet: Fleet, timeout: float) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    logs = "\n".join(f"== {n}\n{fleet.log(n + '.log')}" for n in fleet.agents)
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


@pytest.mark.parametrize("hours", [HOURS, -HOURS], ids=["ahead", "behind"])
def test_a_skewed_agent_keeps_its_range_while_it_heartbeats_and_loses_it_after_the_ttl(
    posted: InnServer, tmp_path: Path, hours: int
) -> None:
    news = f"{posted.url}/?connections=1"
    with harness.running_fleet(posted, tmp_path) as fleet:
        # Slow: one range of the skewed agent lasts well over three TTLs.
        fleet.start_agent(
            "skewed",
            "--mode", "ranges", "--news-server", news, "--batch-headers", "5",
            "--max-headers-per-second", "2",
            env_extra=skewed(hours),
        )  # fmt: skip
        held = wait_for("the skewed agent's range", lambda: held_range(fleet, "skewed"), fleet, 60)
        fleet.start_agent("steady", "--mode", "ranges", "--news-server", news)
        began = time.monotonic()
        while time.monotonic() - began < 3 * LEASE_TTL_SECONDS:
            assert held_range(fleet, "skewed") == held, "taken over while it heartbeats"
            time.sleep(0.2)
        # The steady node asks for leases all along (every range but this one is done).
        wait_for(
            "the other ranges done",
            lambda: fleet.sql("SELECT count(*) = 1 FROM seed_range WHERE status <> 'done'")[0][0],
            fleet,
            90,
        )
        assert held_range(fleet, "skewed") == held
        fleet.agents["skewed"].send_signal(signal.SIGSTOP)
        try:
            ((last_beat,),) = fleet.sql(
                "SELECT heartbeat_at FROM seed_range WHERE id = %s", [held[0]]
            )
            taken = wait_for(
                "the takeover",
                lambda: fleet.sql(
                    "SELECT r.leased_at FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
                    "WHERE r.id = %s AND n.name = 'steady'",
                    [held[0]],
                ),
                fleet,
                LEASE_TTL_SECONDS + 30,
            )
        finally:
            fleet.agents["skewed"].send_signal(signal.SIGCONT)
        waited = (taken[0][0] - last_beat).total_seconds()
        # Not earlier than the TTL after its last heartbeat, and not hours later.
        assert LEASE_TTL_SECONDS <= waited <= LEASE_TTL_SECONDS + RETIRE_SLACK, waited
        record("quiet-" + ("ahead" if hours > 0 else "behind"), {"takeover_after": waited})
        # Woken, the skewed agent's calls are refused (409) and it drops the range.
        wait_for(
            "the skewed agent to drop it", lambda: "lost" in fleet.log("skewed.log"), fleet, 30
        )


def record(name: str, figures: dict[str, Any]) -> None:
    """Figures for docs/reliability.md, beside the suite's other runs."""
    out = Path(os.environ.get("CHAOS_FIGURES", "/tmp")) / f"clock-skew-{name}.json"
    out.write_text(json.dumps(figures, default=str))


# --- two coordinator hosts whose clocks differ ---------------------------------------


@contextmanager
def skewed_hosts(posted: InnServer, workdir: Path) -> Iterator[tuple[Fleet, Fleet]]:
    """Host A 5 hours ahead, host B 5 hours behind; one database, one snapshot directory."""
    with fresh_database() as (url, conninfo):
        hosts = [Fleet(url, conninfo, workdir / name, news_server_url=posted.url) for name in "ab"]
        for host, hours in zip(hosts, (HOURS, -HOURS), strict=True):
            host.workdir.mkdir(parents=True)
            host.server_env = {"SNAPSHOT_DIR": str(workdir / "snapshots"), **skewed(hours)}
        try:
            for host in hosts:
                host.start()
            hosts[0].plan(harness.GROUPS, harness.PLANNED_DAYS, harness.RANGE_ARTICLES)
            yield hosts[0], hosts[1]
        finally:
            for host in hosts:
                host.stop()


def token(fleet: Fleet, name: str) -> str:
    return fleet.issue_token(name).read_text().strip()


def test_two_hosts_hours_apart_agree_on_when_a_lease_expires(
    posted: InnServer, tmp_path: Path
) -> None:
    with skewed_hosts(posted, tmp_path) as (ahead, behind):
        holder, other = token(ahead, "holder"), token(ahead, "other")
        status, offer = call(ahead.url, holder, "/ranges/lease")
        assert status == 200 and offer["lease"], offer
        lease_id, epoch = offer["lease"]["id"], offer["lease"]["epoch"]
        # One range left to hand out: the held one.
        ahead.execute(
            "UPDATE seed_range SET status = 'done', done_at = now(), next_id = end_id + 1 "
            "WHERE id <> %s",
            [lease_id],
        )
        hosts = (ahead.url, behind.url)
        began = time.monotonic()
        while time.monotonic() - began < 3 * LEASE_TTL_SECONDS:
            for url in hosts:
                status, _ = call(url, holder, f"/ranges/{lease_id}/heartbeat", {"epoch": epoch})
                assert status in (200, 204), status
                last_beat = time.monotonic()
                for asked in hosts:  # each claim that finds nothing sweeps quiet leases
                    status, offer = call(asked, other, "/ranges/lease")
                    assert status == 200 and offer["lease"] is None, (asked, offer)
            time.sleep(0.5)
        # Quiet now: the other node gets it once the TTL has passed, from either host.
        taken: dict[str, Any] | None = None
        while taken is None:
            waited = time.monotonic() - last_beat
            assert waited < LEASE_TTL_SECONDS + 30, "never taken over"
            for url in hosts:
                status, offer = call(url, other, "/ranges/lease")
                assert status == 200, offer
                if offer["lease"]:
                    taken = {"host": url, "waited": time.monotonic() - last_beat, **offer}
                    break
            time.sleep(0.25)
        assert taken["lease"]["id"] == lease_id
        assert LEASE_TTL_SECONDS - 0.5 <= taken["waited"] <= LEASE_TTL_SECONDS + RETIRE_SLACK
        status, _ = call(behind.url, holder, f"/ranges/{lease_id}/heartbeat", {"epoch": epoch})
        assert status == 409
        record("hosts", {"takeover_after": taken["waited"]})


def test_a_host_hours_ahead_leaves_an_upload_in_flight_on_another_host(
    posted: InnServer, tmp_path: Path
) -> None:
    with skewed_hosts(posted, tmp_path) as (ahead, behind):
        node, other = token(behind, "windower"), token(behind, "other")
        status, offer = call(behind.url, node, "/groups/lease", {"lane": "history"})
        assert status == 200 and offer["lease"], offer
        lease = offer["lease"]
        path = f"/api/v1/groups/{lease['group']['id']}/lanes/{lease['lane']}/snapshot"
        snapshots = tmp_path / "snapshots"
        snapshots.mkdir(exist_ok=True)
        # A part left by a killed upload long ago: the upkeep removes it.
        forgotten = snapshots / "group-0-history.gz.killed.part"
        forgotten.write_bytes(b"x")
        os.utime(forgotten, (time.time() - 86400, time.time() - 86400))
        # A snapshot the coordinator takes (it checks each one as it streams in):
        # the lane's header, padded and stored uncompressed so that half of it is
        # on the wire while the other host runs its upkeep.
        body = window_snapshot(
            lease["group"]["name"], level=0, rules_version=lease["rules"]["version"],
            padding="x" * 40_000,
        )  # fmt: skip
        with socket.create_connection(("127.0.0.1", behind.port), timeout=30) as upload:
            upload.sendall(
                (
                    f"PUT {path}?epoch={lease['epoch']}&next=1 HTTP/1.1\r\n"
                    f"Host: 127.0.0.1\r\nAuthorization: Bearer {node}\r\n"
                    f"Content-Type: application/gzip\r\nContent-Length: {len(body)}\r\n"
                    "Connection: close\r\n\r\n"
                ).encode()
                + body[: len(body) // 2]
            )
            wait_for("the upload's part", lambda: in_flight(snapshots), behind, 30)
            # Every worker of the ahead host runs its upkeep on its first lease call.
            for _ in range(16):
                assert call(ahead.url, other, "/ranges/lease")[0] == 200
            assert not forgotten.exists(), "the upkeep did not run"
            assert in_flight(snapshots), "the ahead host removed an upload in flight"
            upload.sendall(body[len(body) // 2 :])
            answer = upload.makefile("rb").readline()
        assert answer.startswith(b"HTTP/1.1 204"), answer
        stored = snapshots / f"group-{lease['group']['id']}-history.gz"
        assert stored.read_bytes() == body
        assert behind.sql("SELECT snapshot_size FROM group_lane WHERE epoch = %s AND "
                          "group_id = %s AND lane = 'history'",
                          [lease["epoch"], lease["group"]["id"]]) == [(len(body),)]  # fmt: skip


def in_flight(snapshots: Path) -> list[Path]:
    return [p for p in snapshots.glob("*.part") if "killed" not in p.name]
