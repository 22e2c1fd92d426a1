"""The news server drops connections in the middle of OVER answers and of a greeting.

A proxy (tests/chaos/nntp_cutter.py) stands between the agents and INN2 and
closes connections at byte offsets drawn from a fixed seed; the agents
reconnect and read on. The catalog and every counter equal the reference run:
no segment twice, none missing.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

import pytest

from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
from tests.chaos.nntp_cutter import CutPlan, NntpCutter
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

SEED = 13
CUTS = 8  # OVER answers cut, drawn from the first OVERS
OVERS = 16
MAX_OFFSET = 6000  # bytes into an answer (a range's OVER answer is ~20 kB)


def cut_plan(seed: int) -> CutPlan:
    rng = random.Random(seed)
    overs = sorted(rng.sample(range(1, OVERS + 1), CUTS))
    return CutPlan(over_cuts={n: rng.randrange(1, MAX_OFFSET) for n in overs})


@pytest.fixture(scope="module")
def cut(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    plan = cut_plan(SEED)
    workdir = tmp_path_factory.mktemp("cuts")
    with NntpCutter((posted.host, posted.port), plan).running() as proxy:
        outcome = harness.run_fleet(posted, workdir, {}, proxy.url)
    outcome.extra["cuts"] = list(plan.cuts)
    (workdir / "cuts.json").write_text(json.dumps(plan.cuts))  # for docs/reliability.md
    yield outcome


def test_connections_cut_inside_over_answers_and_a_greeting_leave_the_reference_catalog(
    cut: Outcome, reference: Outcome
) -> None:
    cuts = cut.extra["cuts"]
    assert "greeting" in cuts
    assert len([c for c in cuts if c.startswith("over")]) >= CUTS // 2, cuts
    harness.assert_same_outcome(cut, reference)


def test_after_the_cuts_no_segment_is_twice_in_the_catalog(cut: Outcome) -> None:
    message_ids = [
        segment.rstrip(")").split(",", 3)[3] for row in cut.catalog for segment in row[-1]
    ]
    assert len(message_ids) == len(set(message_ids))
    assert cut.extra["stuck_leases"] == []
    assert cut.extra["held_lanes"] == []
    assert cut.extra["exits"] == dict.fromkeys(cut.extra["exits"], 0)


def test_stale_epochs_and_replays_during_the_cuts_get_their_documented_answers(
    cut: Outcome,
) -> None:
    clients.assert_documented_answers(cut.extra["troublemaker"])
