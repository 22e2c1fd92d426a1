"""`--soak MINUTES`: the suite's faults, drawn at random with fresh seeds, one
fleet run after another for as long as asked; each run's catalog and counters
must equal the reference. Off by default (docs/reliability.md).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
from tests.chaos.http_cutter import HttpCutter
from tests.chaos.nntp_cutter import NntpCutter
from tests.chaos.snapshot_cutter import SnapshotCutPlan, SnapshotCutter
from tests.chaos.test_coordinator_cuts import cut_plan as http_cut_plan
from tests.chaos.test_disk_full import disk_full_run
from tests.chaos.test_news_cuts import cut_plan as news_cut_plan
from tests.chaos.test_postgres_restart import postgres_restart_run
from tests.chaos.test_worker_kills import kill_plan
from tests.support.inn2 import InnServer

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

# A fault run: (INN2, its work directory, a seed) -> its outcome.
Run = Callable[[InnServer, Path, int], Outcome]


def worker_kills(posted: InnServer, workdir: Path, seed: int) -> Outcome:
    outcome = harness.run_fleet(posted, workdir, kill_plan(seed))
    assert len(outcome.extra["state"].get("kills", [])) >= 20, seed
    return outcome


def news_cuts(posted: InnServer, workdir: Path, seed: int) -> Outcome:
    with NntpCutter((posted.host, posted.port), news_cut_plan(seed)).running() as proxy:
        return harness.run_fleet(posted, workdir, {}, proxy.url)


def http_cuts(posted: InnServer, workdir: Path, seed: int) -> Outcome:
    plan = http_cut_plan(seed)
    return harness.run_fleet(
        posted, workdir, {}, coordinator_proxy=lambda up: HttpCutter(up, plan).running()
    )


def snapshot_cuts(posted: InnServer, workdir: Path, seed: int) -> Outcome:
    plan = SnapshotCutPlan(cut=set(random.Random(seed).sample(range(1, 4), 2)))
    return harness.run_fleet(
        posted, workdir, {}, coordinator_proxy=lambda up: SnapshotCutter(up, plan).running()
    )


FAULTS: dict[str, tuple[Run, bool]] = {  # name: (the run, whether headers may be read again)
    "worker kills": (worker_kills, False),
    "news-server cuts": (news_cuts, False),
    "coordinator cuts": (http_cuts, False),
    "snapshot download cuts": (snapshot_cuts, False),
    "postgres restart": (
        lambda posted, workdir, _seed: postgres_restart_run(posted, workdir),
        False,
    ),
    "disk full": (lambda posted, workdir, _seed: disk_full_run(posted, workdir), True),
}


def test_soak_faults_at_random_and_every_catalog_equals_the_reference(
    request: pytest.FixtureRequest,
    posted: InnServer,
    reference: Outcome,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    minutes = request.config.getoption("--soak")
    if not minutes:
        pytest.skip("soak runs only with --soak MINUTES")
    deadline = time.monotonic() + 60 * minutes
    draw = random.Random()
    while time.monotonic() < deadline:
        name, seed = draw.choice(sorted(FAULTS)), draw.randrange(2**32)
        run, reread = FAULTS[name]
        workdir = tmp_path_factory.mktemp(f"soak-{name.replace(' ', '-')}-{seed}")
        outcome = run(posted, workdir, seed)
        harness.assert_same_outcome(outcome, reference, reread=reread)
        assert outcome.extra["stuck_leases"] == [], (name, seed)
        assert outcome.extra["held_lanes"] == [], (name, seed)
        assert outcome.extra["parts_left"] == [], (name, seed)
        dropped = name == "worker kills"  # a killed worker drops the calls it had
        clients.assert_documented_answers(outcome.extra["troublemaker"], dropped=dropped)
