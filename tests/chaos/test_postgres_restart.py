"""PostgreSQL stopped (fast shutdown) under load for 10 s, then started again.

The fault run's coordinator (gunicorn, 4 workers) has a cluster of its own
(tests/chaos/database.py). While it is down, every API answer is a 503
`unavailable` with Retry-After, never another 5xx and never a hang past the
client's timeout; a probe and a troublemaker (stale epochs, replays) call all
along. Once it is back the same gunicorn workers go on (no restart), the
agents finish, and the catalog equals the reference: nothing acknowledged
before the stop is lost.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.chaos import clients, harness
from tests.chaos.database import Outage, RestartablePostgres, outage
from tests.chaos.harness import Outcome
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

DOWN_SECONDS = 10.0
BATCHES_FIRST = 30  # batches acknowledged before the stop (a run has 91-101)
SETTLED = 2.0  # seconds after the start: from then on every answer is the usual one
PROBES_AFTER = 3  # probe calls made past SETTLED that the run waits for


def postgres_restart_run(posted: InnServer, workdir: Path) -> Outcome:
    probe, stale = clients.Recorder(), clients.Recorder()
    plan = workdir / "crash-plan.json"

    def acknowledged() -> int:
        return int(harness.crash_state(plan).get("hits", {}).get("batch.after_commit", 0))

    with RestartablePostgres() as cluster:
        outages: list[Outage] = []

        @contextmanager
        def stop_later(fleet: harness.ChaosFleet) -> Iterator[Outage]:
            # The range agents may start while the database is down: their tokens first.
            for name in harness.agent_args(""):
                fleet.tokens.get(name) or fleet.issue_token(name)
            with outage(
                cluster, lambda: acknowledged() >= BATCHES_FIRST, acknowledged, DOWN_SECONDS
            ) as down:
                outages.append(down)
                yield down

        @contextmanager
        def probing(fleet: harness.ChaosFleet) -> Iterator[clients.Recorder]:
            with clients.running(clients.probe(fleet), probe, "probe") as recorder:
                yield recorder
                # The agents may finish within a second of the start, before the probe
                # saw the answers come back: it goes on until it has (or 60 s).
                down = outages[0]
                down.done.wait(120)
                deadline = time.monotonic() + 60
                while (
                    time.monotonic() < deadline
                    and len(after_restart(down, recorder)) < PROBES_AFTER
                ):
                    time.sleep(0.25)

        outcome = harness.run_fleet(
            posted,
            workdir,
            {},
            database=cluster.database,
            range_agents=("ranges-1", "ranges-2", "ranges-3"),  # four agents in all
            during={
                "outage": stop_later,
                "probe": probing,
                "troublemaker": lambda fleet: clients.running(
                    clients.troublemaker(fleet), stale, "troublemaker"
                ),
            },
        )
        log = (workdir / "gunicorn.log").read_text(errors="replace")
    outcome.extra["probe"] = probe
    outcome.extra["troublemaker"] = stale
    outcome.extra["statuses_logged"] = re.findall(r"\bapi method=\S+ path=(\S+) status=(\d+)", log)
    outcome.extra["workers_booted"] = log.count("Booting worker")
    write_figures(workdir, outcome)
    return outcome


def after_restart(down: Outage, recorder: clients.Recorder) -> list[clients.Call]:
    """The probe's calls made once the database had been up SETTLED seconds."""
    return [c for c in list(recorder.calls) if down.started and c.at > down.started + SETTLED]


def write_figures(workdir: Path, outcome: Outcome) -> None:
    down = outcome.extra["outage"]
    calls = outcome.extra["probe"].calls + outcome.extra["troublemaker"].calls
    during = [c for c in calls if down.stopped <= c.at <= down.started]
    figures = json.loads((workdir / "figures.json").read_text())
    figures.update(
        batches_before_stop=down.batches_before,
        down_seconds=round(down.started - down.stopped, 1),
        calls_during_outage=len(during),
        answers_during_outage=sorted({c.status for c in during}),
        longest_call=max((c.seconds for c in calls), default=0),
        statuses_logged=sorted({s for _, s in outcome.extra["statuses_logged"]}),
    )
    (workdir / "figures.json").write_text(json.dumps(figures))
    (workdir / "calls.json").write_text(
        json.dumps(outcome.extra["probe"].dump() + outcome.extra["troublemaker"].dump())
    )


@pytest.fixture(scope="module")
def restarted(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    yield postgres_restart_run(posted, tmp_path_factory.mktemp("postgres-restart"))


def during_outage(outcome: Outcome, calls: list[clients.Call]) -> list[clients.Call]:
    """Calls made and answered while the database was down, with a second's slack at
    each end: the stop is timed before `pg_ctl stop` runs, and the start once
    `pg_ctl start -w` has seen the server ready, which it checks a few times a
    second (a call may be answered by the database just before that)."""
    down = outcome.extra["outage"]
    return [c for c in calls if down.stopped + 1 <= c.at and c.at + c.seconds <= down.started - 1]


def test_the_database_went_down_under_load_and_came_back(restarted: Outcome) -> None:
    down = restarted.extra["outage"]
    assert down.errors == [], down.errors
    assert down.stopped and down.started - down.stopped >= DOWN_SECONDS
    assert down.batches_before >= BATCHES_FIRST
    assert restarted.extra["probe"].errors == [] and restarted.extra["troublemaker"].errors == []


def test_while_it_is_down_every_api_answer_is_a_503_with_retry_after(restarted: Outcome) -> None:
    calls = during_outage(restarted, restarted.extra["probe"].calls)
    assert len(calls) >= 20, len(calls)
    paths = {c.path.split("apikey=")[0] for c in calls}
    assert {p.split("apikey=")[0] for _, p, _, _ in clients.PROBES} <= paths
    for c in calls:
        assert c.status == 503, c
        if c.path != "/readyz":  # a readiness probe names no retry time
            assert c.retry_after, c
        if c.path.startswith("/api/"):
            assert c.code == "unavailable", c


def test_no_answer_is_a_5xx_other_than_503_and_none_hangs(restarted: Outcome) -> None:
    calls = restarted.extra["probe"].calls + restarted.extra["troublemaker"].calls
    assert [c for c in calls if c.failure] == []
    assert max(c.seconds for c in calls) < clients.CLIENT_TIMEOUT
    assert {c.status for c in calls if c.status >= 500} <= {503}
    logged = {status for _, status in restarted.extra["statuses_logged"]}
    assert {s for s in logged if s.startswith("5")} <= {"503"}, logged
    assert "503" in logged
    assert restarted.extra["server_errors"] == []
    assert set(restarted.extra["statuses"]) <= {"503"}


def test_the_same_workers_answer_again_after_the_restart(restarted: Outcome) -> None:
    assert restarted.extra["workers_booted"] == 4  # none died, none was replaced
    down = restarted.extra["outage"]
    after = after_restart(down, restarted.extra["probe"])
    assert len(after) >= PROBES_AFTER, "no probe call after the restart"
    normal = {(m, p.split("apikey=")[0]): s for m, p, _, s in clients.PROBES}
    for c in after:
        if c.who == "probe":
            assert c.status == normal[(c.method, c.path.split("apikey=")[0])], c
        else:
            assert c.status == 401, c


def test_stale_epochs_and_replays_get_only_their_documented_answers(restarted: Outcome) -> None:
    calls = restarted.extra["troublemaker"].calls
    assert {c.who for c in calls} == {"stale", "replay"}
    assert during_outage(restarted, calls), "the troublemaker sent nothing during the outage"
    for c in calls:
        if c.who == "stale":
            assert (c.status, c.code) in {(409, "lease_lost"), (503, "unavailable")}, c
        else:
            assert c.status in {200, 409, 503}, c
            if c.status == 200:
                assert c.body["stored"] == 0, c
    assert any(c.who == "replay" and c.status == 200 for c in calls)
    assert any(c.who == "stale" and c.status == 409 for c in calls)


def test_nothing_acknowledged_is_lost_and_the_catalog_equals_the_reference(
    restarted: Outcome, reference: Outcome
) -> None:
    harness.assert_same_outcome(restarted, reference)
    assert restarted.extra["stuck_leases"] == []
    assert restarted.extra["held_lanes"] == []
    assert restarted.extra["exits"] == dict.fromkeys(restarted.extra["exits"], 0)


def troublemaker_answers(calls: list[clients.Call]) -> dict[str, Any]:
    return {who: sorted({c.status for c in calls if c.who == who}) for who in ("stale", "replay")}
