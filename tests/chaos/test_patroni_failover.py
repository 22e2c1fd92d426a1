"""The primary PostgreSQL lost under load, then a planned switchover, on a Patroni cluster.

The coordinator runs on two gunicorn hosts whose DATABASE_URL is libpq's
multi-host form over a two-member Patroni cluster in synchronous mode
(tests/support/patroni.py, deploy/patroni/ as it is). Three agents index the
fault suite's posts through both hosts. While batches are in flight:

1. the primary member is lost whole (its Patroni and its PostgreSQL SIGKILLed
   together): nothing answers for the leader key's TTL, then Patroni promotes
   the synchronous standby;
2. the lost member starts again and rejoins as a replica (pg_rewind), and
   becomes the synchronous standby;
3. `patronictl switchover` hands the primary back to it, under the same load.

Then every range is done; the catalog and every counter equal the undisturbed
reference run's (nothing doubled); everything committed on the old primary
before each change is on the new one (what the coordinator acknowledged);
neither host answered a 5xx other than 503; and the agents logged no
coordinator failure but retried 503s. The seconds from the kill to the first
lease answered again are printed and kept in figures.json (docs/reliability.md).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.chaos import harness
from tests.chaos.harness import ChaosFleet, Outcome
from tests.support.inn2 import InnServer
from tests.support.patroni import PatroniCluster

pytestmark = [pytest.mark.e2e, pytest.mark.chaos, pytest.mark.slow]

BATCHES_BEFORE_KILL = 12  # acknowledged before the primary is lost (a run has ~90)
BATCHES_BEFORE_SWITCHOVER = 8  # more acknowledged after the rejoin, before the switchover
RUN_TIMEOUT = 240.0
# Slow enough that work is left for the switchover after the ~30 s without a primary.
AGENT_RATE = "12"  # headers per second per agent


@dataclass
class Event:
    """One change of primary: when, from whom to whom, and what was committed before it."""

    kind: str
    old: str = ""
    new: str = ""
    began: float = 0.0  # time.time() of the kill or of the switchover command
    led: float = 0.0  # the new primary takes writes
    before: dict[str, Any] = field(default_factory=dict)  # committed on the old primary
    after: dict[str, Any] = field(default_factory=dict)  # the same, read on the new one


@dataclass
class Failovers:
    events: list[Event] = field(default_factory=list)
    rejoined: float = 0.0  # the lost member streams again as a replica
    errors: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def committed(cluster: PatroniCluster, member: str) -> dict[str, Any]:
    """What the member holds: each range's resume point, counters and the catalog size.
    On a primary in synchronous mode, a commit is seen only once the standby has it."""
    with cluster.connect(member, superuser=False) as conn:
        ranges = conn.execute("SELECT id, next_id, headers, status FROM seed_range").fetchall()
        ((files,),) = conn.execute("SELECT count(*) FROM catalog_file").fetchall()
    return {"ranges": {r[0]: (r[1], r[2], r[3]) for r in ranges}, "files": files}


def acknowledged(plan: Path) -> int:
    return int(harness.crash_state(plan).get("hits", {}).get("batch.after_commit", 0))


@contextmanager
def primary_changes(cluster: PatroniCluster, plan: Path) -> Iterator[Failovers]:
    """In a thread beside the run: lose the primary, bring it back, switch over to it."""
    record = Failovers()

    def wait_batches(count: int) -> None:
        deadline = time.monotonic() + 120
        while acknowledged(plan) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        assert acknowledged(plan) >= count, f"only {acknowledged(plan)} batches acknowledged"

    def run() -> None:
        try:
            wait_batches(BATCHES_BEFORE_KILL)
            lost = cluster.wait_for_leader()
            kill = Event("kill", old=lost, before=committed(cluster, lost))
            kill.began = time.time()
            cluster.kill_member(lost)
            record.events.append(kill)
            kill.new = cluster.wait_for_leader(timeout=120, other_than=lost)
            kill.led = time.time()
            kill.after = committed(cluster, kill.new)

            cluster.start_member(lost)
            cluster.wait_for_replica(lost, timeout=120)
            record.rejoined = time.time()
            assert cluster.wait_for_sync_standby(timeout=60) == lost

            wait_batches(acknowledged(plan) + BATCHES_BEFORE_SWITCHOVER)
            switch = Event("switchover", old=kill.new, before=committed(cluster, kill.new))
            switch.began = time.time()
            record.events.append(switch)
            cluster.switchover(candidate=lost)
            switch.new = lost
            switch.led = time.time()
            switch.after = committed(cluster, lost)
            cluster.wait_for_replica(kill.new, timeout=120)  # the demoted primary follows
        except Exception as exc:
            record.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            record.done.set()

    thread = threading.Thread(target=run, name="primary-changes", daemon=True)
    thread.start()
    try:
        yield record
    finally:
        thread.join(300)


def start_agents(fleet: ChaosFleet, other: ChaosFleet, news: str) -> None:
    """A window agent and two range agents, each given both hosts (two start on the other)."""
    common = ["--news-server", news, "--batch-headers", "20", "--http-timeout", "10"]
    common += ["--max-headers-per-second", AGENT_RATE]
    agents = {
        "window": ["--mode", "window", "--lane", "history", "--snapshot-every", "1"],
        "ranges-1": ["--mode", "ranges"],
        "ranges-2": ["--mode", "ranges"],
    }
    for index, (name, args) in enumerate(agents.items()):
        hosts = [fleet.url, other.url]
        fleet.agent_urls = hosts if index % 2 == 0 else hosts[::-1]
        fleet.start_agent(name, *args, *common)


def wait_until_done(fleets: list[ChaosFleet], record: Failovers) -> float:
    fleet = fleets[0]
    began = time.monotonic()
    while time.monotonic() - began < RUN_TIMEOUT:
        try:
            rows = fleet.sql("SELECT count(*) FROM seed_range WHERE status <> 'done'")
        except psycopg.OperationalError:  # no primary yet: look again
            rows = []
        if rows == [(0,)] and record.done.is_set():
            return time.monotonic() - began
        for name, process in fleet.agents.items():
            assert process.poll() is None, f"{name} exited:\n{fleet.log(name + '.log')}"
        for host in fleets:
            assert host.gunicorn is not None and host.gunicorn.poll() is None, host.log(
                "gunicorn.log"
            )
        time.sleep(0.3)
    raise AssertionError(
        f"not done: {fleet.sql('SELECT id, status, next_id, end_id FROM seed_range')}\n"
        + "\n".join(f"== {n}\n{fleet.log(n + '.log')}" for n in fleet.agents)
    )


def retries(fleet: ChaosFleet) -> list[tuple[str, str]]:
    """Every coordinator call an agent retried: (unreachable or unavailable, the cause)."""
    found = []
    for name in fleet.agents:
        for line in (fleet.workdir / f"{name}.log").read_text(errors="replace").splitlines():
            match = harness.RETRY.match(line)
            if match:
                found.append((match.group(3), match.group(4)))
    return found


def request_lines(host: ChaosFleet) -> list[dict[str, Any]]:
    """The host's request log (LOG_FORMAT=json): one object per API call."""
    lines = []
    for line in (host.workdir / "gunicorn.log").read_text(errors="replace").splitlines():
        if line.startswith("{"):
            entry = json.loads(line)
            if "status" in entry:
                entry["at"] = datetime.fromisoformat(entry["time"]).timestamp()
                lines.append(entry)
    return lines


def failover_run(posted: InnServer, workdir: Path, cluster: PatroniCluster) -> Outcome:
    plan = workdir / "crash-plan.json"
    workdir.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps({"kills": {}}))
    env = {"CRASH_POINT_PLAN": str(plan), "LOG_FORMAT": "json"}

    @contextmanager
    def database() -> Iterator[tuple[str, dict[str, Any]]]:
        yield cluster.database_url(connect_timeout=2), cluster.primary_conninfo()

    with harness.running_fleet(posted, workdir / "a", env, database) as host_a:
        host_b = ChaosFleet(
            host_a.database_url,
            host_a.conninfo,
            workdir / "b",
            news_server_url=posted.url,
            extra_env=host_a.extra_env,
        )
        (workdir / "b").mkdir()
        try:
            host_b.start()
            hosts = [host_a, host_b]
            with primary_changes(cluster, plan) as record:
                start_agents(host_a, host_b, f"{posted.url}/?connections=2")
                took = wait_until_done(hosts, record)
            exits = harness.stop_agents(host_a)
            outcome = harness.read_outcome(host_a)
            outcome.extra = {
                "seconds": took,
                "exits": exits,
                "record": record,
                "requests": [line for host in hosts for line in request_lines(host)],
                "server_logs": "\n".join(h.log("gunicorn.log") for h in hosts),
                "held_lanes": host_a.sql("SELECT id FROM group_lane WHERE node_id IS NOT NULL"),
                **harness.agent_waits(host_a),
                "retries": retries(host_a),
                "agent_logs": {n: host_a.log(n + ".log") for n in host_a.agents},
            }
        finally:
            host_b.stop()
    write_figures(workdir, outcome)
    return outcome


def first_answer_after(outcome: Outcome, at: float, suffix: str) -> float | None:
    """Seconds from `at` to the first 200 on a path ending in `suffix`."""
    answered = [
        line["at"]
        for line in outcome.extra["requests"]
        if line["at"] > at and line["status"] == 200 and line["path"].endswith(suffix)
    ]
    return round(min(answered) - at, 1) if answered else None


def longest_silence(outcome: Outcome, began: float, until: float) -> float:
    """The longest time around a change of primary in which neither host answered a
    node call with success: what the fleet saw of it."""
    answered = sorted(
        line["at"]
        for line in outcome.extra["requests"]
        if line["status"] < 400 and began - 5 <= line["at"] <= until
    )
    return round(max((b - a for a, b in pairwise(answered)), default=0.0), 1)


def write_figures(workdir: Path, outcome: Outcome) -> None:
    record: Failovers = outcome.extra["record"]
    figures: dict[str, Any] = {"run_seconds": round(outcome.extra["seconds"], 1)}
    for event in record.events:
        figures[event.kind] = {
            "from": event.old,
            "to": event.new,
            "seconds_to_new_primary": round(event.led - event.began, 1),
            "seconds_to_first_lease": first_answer_after(outcome, event.began, "/lease"),
            "seconds_to_first_batch": first_answer_after(outcome, event.began, "/batch"),
            "longest_without_an_answer": longest_silence(outcome, event.began, event.led + 15),
            "answers_503": sum(
                1
                for line in outcome.extra["requests"]
                if line["status"] == 503 and event.began <= line["at"] <= event.led + 5
            ),
        }
    if record.rejoined and record.events:
        figures["seconds_to_rejoin"] = round(record.rejoined - record.events[0].led, 1)
    figures["agent_retries"] = len(outcome.extra["retries"])
    outcome.extra["figures"] = figures
    (workdir / "figures.json").write_text(json.dumps(figures, indent=1))
    print("\nPatroni failover figures:", json.dumps(figures))


@pytest.fixture(scope="module")
def failover(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    with PatroniCluster(members=2) as cluster:
        yield failover_run(posted, tmp_path_factory.mktemp("patroni-failover"), cluster)


def test_the_primary_was_lost_then_switched_over_while_batches_were_in_flight(
    failover: Outcome,
) -> None:
    record: Failovers = failover.extra["record"]
    assert record.errors == [], record.errors
    kill, switch = record.events
    assert kill.kind == "kill" and kill.new != kill.old
    assert switch.kind == "switchover" and switch.new == kill.old  # the old primary leads again
    assert record.rejoined > kill.led
    figures = failover.extra["figures"]
    # The coordinator leased again once the new primary took writes, and the agents
    # went on: batches were acknowledged after each change.
    for kind in ("kill", "switchover"):
        assert figures[kind]["seconds_to_first_lease"] is not None, figures
        assert figures[kind]["seconds_to_first_batch"] is not None, figures


def test_everything_committed_before_a_change_of_primary_is_on_the_new_one(
    failover: Outcome,
) -> None:
    for event in failover.extra["record"].events:
        before, after = event.before, event.after
        assert before["files"] > 0 and after["files"] >= before["files"], event.kind
        for range_id, (next_id, headers, status) in before["ranges"].items():
            now_next, now_headers, now_status = after["ranges"][range_id]
            assert now_next >= next_id and now_headers >= headers, (event.kind, range_id)
            if status == "done":
                assert now_status == "done", (event.kind, range_id)


def test_every_range_is_done_and_the_catalog_and_counters_equal_the_reference(
    failover: Outcome, reference: Outcome
) -> None:
    assert {row[3] for row in failover.ranges} == {"done"}
    harness.assert_same_outcome(failover, reference)
    assert failover.extra["held_lanes"] == []
    assert failover.extra["exits"] == dict.fromkeys(failover.extra["exits"], 0)


def test_no_host_answered_a_5xx_but_503(failover: Outcome) -> None:
    statuses = {line["status"] for line in failover.extra["requests"]}
    assert 200 in statuses
    assert {s for s in statuses if s >= 500} <= {503}, statuses
    logs = failover.extra["server_logs"]
    assert "Internal Server Error" not in logs and "Traceback" not in logs


def test_the_agents_met_only_503s_and_retried_them(failover: Outcome) -> None:
    retried = failover.extra["retries"]
    assert retried, "no agent met the failover"
    assert {kind for kind, _ in retried} == {"unavailable"}, retried
    assert set(failover.extra["statuses"]) == {"503"}, retried
    for name, log in failover.extra["agent_logs"].items():
        assert " ERROR " not in log and "Traceback" not in log, (name, log)
