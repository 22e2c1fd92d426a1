"""The network cuts batch calls halfway: in the request's body or in the answer's.

A proxy (tests/chaos/http_cutter.py) stands between the agents and the
coordinator. A batch cut in its request is never stored; one cut in its answer
is stored and the agent, not knowing, sends the same call again, which changes
nothing. Either way the catalog and every counter equal the reference run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
from tests.chaos.http_cutter import HttpCutPlan, HttpCutter
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

SEED = 13
CUTS = 12  # batch calls cut, drawn from the first CALLS
CALLS = 40


def cut_plan(seed: int) -> HttpCutPlan:
    rng = random.Random(seed)
    calls = sorted(rng.sample(range(1, CALLS + 1), CUTS))
    return HttpCutPlan(cuts_at={n: rng.choice(("request", "answer")) for n in calls})


@pytest.fixture(scope="module")
def cut(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    plan = cut_plan(SEED)
    workdir = tmp_path_factory.mktemp("http-cuts")
    outcome = harness.run_fleet(
        posted, workdir, {}, coordinator_proxy=lambda upstream: HttpCutter(upstream, plan).running()
    )
    outcome.extra["cuts"] = list(plan.cuts)
    (workdir / "cuts.json").write_text(json.dumps(plan.cuts))  # for docs/reliability.md
    yield outcome


def test_batch_calls_cut_halfway_leave_the_reference_catalog(
    cut: Outcome, reference: Outcome
) -> None:
    cuts = cut.extra["cuts"]
    assert len(cuts) == CUTS, cuts
    assert {c.split("#")[0] for c in cuts} == {"request", "answer"}
    harness.assert_same_outcome(cut, reference)


def test_after_the_cut_calls_nothing_is_held_and_no_segment_is_twice(cut: Outcome) -> None:
    message_ids = [
        segment.rstrip(")").split(",", 3)[3] for row in cut.catalog for segment in row[-1]
    ]
    assert len(message_ids) == len(set(message_ids))
    assert cut.extra["stuck_leases"] == []
    assert cut.extra["held_lanes"] == []
    assert cut.extra["exits"] == dict.fromkeys(cut.extra["exits"], 0)
    assert set(cut.extra["statuses"]) <= {"503"}


def test_stale_epochs_and_replays_during_the_cuts_get_their_documented_answers(
    cut: Outcome,
) -> None:
    clients.assert_documented_answers(cut.extra["troublemaker"])
