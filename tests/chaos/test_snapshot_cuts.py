"""The network cuts snapshot downloads halfway.

A window agent that takes a lane over downloads the lane's snapshot: the open
files the last holder carried. A proxy (tests/chaos/snapshot_cutter.py) cuts
the first snapshot GETs after half their body. The agent must not carry on
with an empty window (the open files' segments lie behind the snapshot's
position and are never read again): it downloads the snapshot again, or gives
the lane back. The catalog and every counter equal the reference run.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
from tests.chaos.snapshot_cutter import SnapshotCutPlan, SnapshotCutter
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

CUT = {1, 2}  # snapshot GETs cut halfway (the run makes at least three)


@pytest.fixture(scope="module")
def cut(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    plan = SnapshotCutPlan(cut=set(CUT))
    workdir = tmp_path_factory.mktemp("snapshot-cuts")
    outcome = harness.run_fleet(
        posted,
        workdir,
        {},
        coordinator_proxy=lambda upstream: SnapshotCutter(upstream, plan).running(),
    )
    outcome.extra["cuts"] = list(plan.cuts)
    outcome.extra["window_log"] = "".join(  # every window process's, in order
        path.read_text(errors="replace") for path in sorted(workdir.glob("window*.log"))
    )
    (workdir / "cuts.json").write_text(json.dumps(plan.cuts))  # for docs/reliability.md
    yield outcome


def test_snapshot_downloads_cut_halfway_leave_the_reference_catalog(
    cut: Outcome, reference: Outcome
) -> None:
    harness.assert_same_outcome(cut, reference)
    assert len(cut.extra["cuts"]) == len(CUT), cut.extra["cuts"]


def test_a_cut_download_neither_empties_the_window_nor_stops_the_agent(cut: Outcome) -> None:
    log = cut.extra["window_log"]
    assert "starts empty" not in log and "starting empty" not in log, log[-3000:]
    assert "the snapshot download broke off" in log  # and was downloaded again
    assert cut.extra["stuck_leases"] == []
    assert cut.extra["held_lanes"] == []
    assert cut.extra["exits"] == dict.fromkeys(cut.extra["exits"], 0)
    assert cut.extra["server_errors"] == []


def test_stale_epochs_and_replays_during_the_cuts_get_their_documented_answers(
    cut: Outcome,
) -> None:
    clients.assert_documented_answers(cut.extra["troublemaker"])
