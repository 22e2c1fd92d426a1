"""Coordinator workers SIGKILLed at named points; the catalog still equals the reference.

The coordinator runs the fault suite's settings, so its crash points
(core/crashpoints.py) are live: a plan drawn from a fixed seed names which
hits of each point kill the worker. Gunicorn's arbiter starts a new worker and
the agents, which see a dropped connection, call again. Afterwards the catalog
and every counter equal an undisturbed run of the same posts, nothing is left
leased, and no `.part` file outlives the upkeep that removes them.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from core.crashpoints import POINTS
from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
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


def kill_plan(seed: int) -> dict[str, list[int]]:
    rng = random.Random(seed)
    return {point: sorted(rng.sample(range(1, top + 1), k)) for point, (k, top) in KILLS.items()}


@pytest.fixture(scope="module")
def killed(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    yield harness.run_fleet(posted, tmp_path_factory.mktemp("kills"), kill_plan(SEED))


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
    assert killed.extra["held_lanes"] == []
    assert killed.extra["parts_left"] == []
    assert killed.extra["server_errors"] == []
    # Retried answers were 503s at most, never another 5xx.
    assert {status for status in killed.extra["statuses"]} <= {"503"}
    assert killed.extra["exits"] == dict.fromkeys(killed.extra["exits"], 0)


def test_stale_epochs_and_replays_during_the_kills_get_their_documented_answers(
    killed: Outcome,
) -> None:
    clients.assert_documented_answers(killed.extra["troublemaker"], dropped=True)
