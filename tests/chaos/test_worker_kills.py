"""Coordinator workers SIGKILLed at named points; the catalog still equals the reference.

The coordinator runs the fault suite's settings, so its crash points
(indexer/crashpoints.py) are live: a plan drawn from a fixed seed names which
hits of each point kill the worker. Gunicorn's arbiter starts a new worker and
the agents, which see a dropped connection, call again. Afterwards the catalog
and every counter equal an undisturbed run of the same posts, nothing is left
leased, and no `.part` file outlives the upkeep that removes them.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from indexer.crashpoints import POINTS
from tests.chaos import harness
from tests.chaos.harness import Outcome
from tests.e2e.fleet import LEASE_TTL_SECONDS
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

SEED = 13
# Kills per point and the hits they are drawn from (the reference run's counts
# must reach the highest: asserted, so the plan cannot silently miss).
KILLS = {
    "batch.in_transaction": (7, 40),
    "batch.after_commit": (6, 40),
    "finish.in_transaction": (4, 12),
    "snapshot.put.written": (3, 8),
    "snapshot.get.opened": (2, 3),
}
RESTORES = 3  # snapshot GETs each run makes (the window agent restarted until then)


def kill_plan(seed: int) -> dict[str, list[int]]:
    rng = random.Random(seed)
    return {point: sorted(rng.sample(range(1, top + 1), k)) for point, (k, top) in KILLS.items()}


@pytest.fixture(scope="module")
def posted(inn_server: InnServer) -> InnServer:
    harness.post_articles(inn_server)
    return inn_server


def run(inn: InnServer, workdir: Path, kills: dict[str, list[int]]) -> Outcome:
    plan = workdir / "crash-plan.json"
    workdir.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps({"kills": kills}))
    with harness.running_fleet(inn, workdir, {"CRASH_POINT_PLAN": str(plan)}) as fleet:
        news = f"{inn.url}/?connections=2"
        took = harness.wait_until_done(fleet, news, restores=RESTORES, plan=plan)
        stuck = harness.stuck_leases(fleet)
        exits = harness.stop_agents(fleet)
        outcome = harness.read_outcome(fleet)
        # A killed PUT leaves its `.part`; the periodic upkeep removes parts
        # untouched for two lease TTLs (leases/snapshots.py, remove_stale_parts):
        # run it as `manage.py maintain` would with the fleet's short TTL (which
        # the system checks refuse to a management command).
        parts = list((workdir / "snapshots").glob("*.part"))
        if parts:
            age = time.time() - newest(parts)
            time.sleep(max(0.0, 2 * LEASE_TTL_SECONDS + 1 - age))
            fleet.python(
                "from leases.snapshots import remove_stale_parts\n"
                f"remove_stale_parts(older_than={2 * LEASE_TTL_SECONDS})\n"
            )
        outcome.extra = {
            "seconds": took,
            "exits": exits,
            "state": harness.crash_state(plan),
            "stuck_leases": stuck,
            "parts_left": [p.name for p in (workdir / "snapshots").glob("*.part")],
            "server_errors": harness.server_errors(fleet),
            **harness.agent_waits(fleet),
        }
        # The figures docs/reliability.md reports, beside the run's logs.
        state = outcome.extra["state"]
        deaths = state.get("kills", [])
        figures = {
            "kills": len(deaths),
            "batches_acknowledged": state.get("hits", {}).get("batch.after_commit", 0)
            - deaths.count("batch.after_commit"),
            "seconds": round(took, 1),
            "longest_wait": outcome.extra["longest_wait"],
            "statuses": outcome.extra["statuses"],
        }
        (workdir / "figures.json").write_text(json.dumps(figures))
        return outcome


def newest(paths: list[Path]) -> float:
    return max(p.stat().st_mtime for p in paths if p.exists()) if paths else 0.0


@pytest.fixture(scope="module")
def reference(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    return run(posted, tmp_path_factory.mktemp("reference"), {})


@pytest.fixture(scope="module")
def killed(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    yield run(posted, tmp_path_factory.mktemp("kills"), kill_plan(SEED))


def test_the_reference_run_reaches_every_planned_kill(reference: Outcome) -> None:
    hits = reference.extra["state"].get("hits", {})
    for point, (_, top) in KILLS.items():
        assert hits.get(point, 0) >= top, (point, hits)
    assert reference.extra["exits"] == dict.fromkeys(reference.extra["exits"], 0)


def test_twenty_workers_die_at_every_point_and_the_catalog_equals_the_reference(
    killed: Outcome, reference: Outcome
) -> None:
    deaths = killed.extra["state"].get("kills", [])
    assert len(deaths) >= 20, killed.extra["state"]
    assert set(deaths) == set(POINTS)
    harness.assert_same_outcome(killed, reference)


def test_after_the_kills_nothing_is_held_and_no_part_is_left(killed: Outcome) -> None:
    assert killed.extra["stuck_leases"] == []
    assert killed.extra["parts_left"] == []
    assert killed.extra["server_errors"] == []
    # Retried answers were 503s at most, never another 5xx.
    assert {status for status in killed.extra["statuses"]} <= {"503"}
    assert killed.extra["exits"] == dict.fromkeys(killed.extra["exits"], 0)


def test_soak_workers_die_at_random_and_every_catalog_equals_the_reference(
    request: pytest.FixtureRequest,
    posted: InnServer,
    reference: Outcome,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`--soak MINUTES`: kill plans from fresh seeds, one fleet run after another."""
    minutes = request.config.getoption("--soak")
    if not minutes:
        pytest.skip("soak runs only with --soak MINUTES")
    deadline = time.monotonic() + 60 * minutes
    seeds = random.Random()
    while time.monotonic() < deadline:
        seed = seeds.randrange(2**32)
        outcome = run(posted, tmp_path_factory.mktemp(f"soak-{seed}"), kill_plan(seed))
        assert len(outcome.extra["state"].get("kills", [])) >= 20, seed
        harness.assert_same_outcome(outcome, reference)
        assert outcome.extra["stuck_leases"] == [], seed
        assert outcome.extra["parts_left"] == [], seed
