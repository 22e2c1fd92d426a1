"""The snapshot disk fills up under load for 10 s, then space comes back.

The coordinator's SNAPSHOT_DIR is a tmpfs of its own (tests/support/small_disk.py).
Once the window agent has uploaded a few snapshots, a filler file takes every
free byte. Snapshot PUTs then answer 507 `storage_full` (never a 500), leave
no `.part`, and the lane's last snapshot stays as it was: its row, its file
and what a GET serves (same checksum). The window agent keeps indexing
(a refused snapshot is skipped), uploads again once the filler is gone, and
the catalog equals the reference. A troublemaker sends stale epochs and
replays all along. The relay writes no files, so it has nothing to fill.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.chaos import clients, harness
from tests.chaos.harness import Outcome
from tests.support.inn2 import InnServer
from tests.support.small_disk import fill, small_disk

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]

FULL_SECONDS = 10.0
PUTS_FIRST = 4  # snapshots written before the disk fills
LANES = """
SELECT l.group_id, l.lane, l.snapshot_next, l.snapshot_size, n.name, l.epoch
  FROM group_lane l LEFT JOIN seed_node n ON n.id = l.node_id
 WHERE l.snapshot_next IS NOT NULL ORDER BY 1, 2
"""


@dataclass
class DiskFull:
    filled: float = 0.0
    freed: float = 0.0
    puts_before: int = 0  # snapshots written when the disk filled
    files_at_fill: dict[str, str] = field(default_factory=dict)  # name: sha256
    files_at_free: dict[str, str] = field(default_factory=dict)
    rows_at_fill: list[tuple[Any, ...]] = field(default_factory=list)
    rows_at_free: list[tuple[Any, ...]] = field(default_factory=list)
    part_samples: list[list[str]] = field(default_factory=list)
    gets: list[clients.Call] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def snapshot_files(directory: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in directory.glob("group-*.gz")
    }


def hits(plan: Path, point: str) -> int:
    return int(harness.crash_state(plan).get("hits", {}).get(point, 0))


def while_full(fleet: harness.ChaosFleet, directory: Path, record: DiskFull) -> None:
    """Keep the disk full until FULL_SECONDS; each second sample the `.part` files and GET
    each lane's snapshot as its holder. Space a removed file frees is taken again at once
    (a tenth of a second), and the snapshots are recorded once a second has settled it."""
    sampled = record.filled
    while time.time() - record.filled < FULL_SECONDS:
        fill(directory)
        if not record.files_at_fill and time.time() - record.filled >= 1.0:
            record.files_at_fill = snapshot_files(directory)
            record.rows_at_fill = [r[:4] for r in fleet.sql(LANES)]
        if time.time() - sampled >= 1.0:
            sampled = time.time()
            record.part_samples.append(sorted(p.name for p in directory.glob("*.part")))
            for group_id, lane, _, _, node, epoch in fleet.sql(LANES):
                if node in fleet.tokens:
                    path = f"/api/v1/groups/{group_id}/lanes/{lane}/snapshot?epoch={epoch}"
                    token = fleet.tokens[node].read_text().strip()
                    get = clients.call(fleet.url, "GET", path, who="get", token=token)
                    record.gets.append(get)
        time.sleep(0.1)


@contextmanager
def disk_full(fleet: harness.ChaosFleet, directory: Path, plan: Path) -> Iterator[DiskFull]:
    """Once PUTS_FIRST snapshots are written, fill the disk for FULL_SECONDS, then free it."""
    record = DiskFull()
    filler = directory / "filler"

    def run() -> None:
        try:
            limit = time.monotonic() + harness.RUN_TIMEOUT
            while hits(plan, "snapshot.put.written") < PUTS_FIRST and time.monotonic() < limit:
                time.sleep(0.2)
            record.puts_before = hits(plan, "snapshot.put.written")
            fill(directory, filler.name)
            record.filled = time.time()
            while_full(fleet, directory, record)
            record.files_at_free = snapshot_files(directory)
            record.rows_at_free = [r[:4] for r in fleet.sql(LANES)]
        except Exception as exc:
            record.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            filler.unlink(missing_ok=True)
            record.freed = time.time()

    thread = threading.Thread(target=run, name="disk-full", daemon=True)
    thread.start()
    try:
        yield record
    finally:
        thread.join(harness.RUN_TIMEOUT + FULL_SECONDS)
        filler.unlink(missing_ok=True)


def disk_full_run(posted: InnServer, workdir: Path) -> Outcome:
    stale = clients.Recorder()
    plan = workdir / "crash-plan.json"
    with small_disk(workdir / "snapshots", "4m") as directory:
        outcome = harness.run_fleet(
            posted,
            workdir,
            {},
            # The window agent alone (80 headers/s): its lane still has ranges to
            # read, and snapshots to write, once the disk has room again.
            range_agents=(),
            # The 4 MiB disk itself refuses here (ENOSPC), not the space the limits keep.
            server_env={"SNAPSHOT_KEEP_FREE_BYTES": "0"},
            during={
                "disk": lambda fleet: disk_full(fleet, directory, plan),
                "troublemaker": lambda fleet: clients.running(
                    clients.troublemaker(fleet), stale, "troublemaker"
                ),
            },
        )
        outcome.extra["puts_after"] = hits(plan, "snapshot.put.written")
        outcome.extra["files_at_end"] = snapshot_files(directory)
    log = (workdir / "gunicorn.log").read_text(errors="replace")
    outcome.extra["troublemaker"] = stale
    outcome.extra["statuses_logged"] = re.findall(
        r"\bapi method=(\S+) path=(\S+) status=(\d+)", log
    )
    # Figures only: a restarted agent's log starts afresh.
    outcome.extra["refused"] = sum(
        (workdir / f"{name}.log").read_text(errors="replace").count("snapshot refused: 507")
        for name in outcome.extra["exits"]
    )
    write_figures(workdir, outcome)
    return outcome


def write_figures(workdir: Path, outcome: Outcome) -> None:
    disk = outcome.extra["disk"]
    figures = json.loads((workdir / "figures.json").read_text())
    figures.update(
        puts_before_full=disk.puts_before,
        puts_after=outcome.extra["puts_after"],
        full_seconds=round(disk.freed - disk.filled, 1),
        puts_refused_507=sum(
            1 for m, p, s in outcome.extra["statuses_logged"] if s == "507" and m == "PUT"
        ),
        agent_refusals=outcome.extra["refused"],
        gets_while_full=sorted({c.status for c in disk.gets}),
        statuses_logged=sorted({s for _, _, s in outcome.extra["statuses_logged"]}),
    )
    (workdir / "figures.json").write_text(json.dumps(figures))


@pytest.fixture(scope="module")
def full(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Outcome]:
    yield disk_full_run(posted, tmp_path_factory.mktemp("disk-full"))


def test_puts_on_the_full_disk_are_507s_and_nothing_else_fails(full: Outcome) -> None:
    disk = full.extra["disk"]
    assert disk.errors == [], disk.errors
    assert disk.puts_before >= PUTS_FIRST and disk.freed - disk.filled >= FULL_SECONDS
    logged = full.extra["statuses_logged"]
    refused = [p for m, p, s in logged if s == "507"]
    assert refused and all(p.endswith("/snapshot") for p in refused), refused
    assert {s for _, _, s in logged if s.startswith("5")} <= {"503", "507"}
    assert full.extra["server_errors"] == []


def test_the_last_snapshot_stays_whole_while_the_disk_is_full(full: Outcome) -> None:
    disk = full.extra["disk"]
    assert disk.files_at_fill and disk.files_at_free == disk.files_at_fill
    assert disk.rows_at_free == disk.rows_at_fill
    assert disk.gets, "no snapshot was read while the disk was full"
    served = set(disk.files_at_fill.values())
    for c in disk.gets:
        assert c.status in {200, 409}, c  # 409: the lane changed hands meanwhile
        if c.status == 200:
            assert c.digest in served, c
    # Every `.part` a refused PUT made was gone by the next sample, a second later.
    for earlier, later in zip(disk.part_samples, disk.part_samples[1:], strict=False):
        assert not set(earlier) & set(later), disk.part_samples
    assert full.extra["parts_left"] == []


def test_once_space_is_back_the_lane_goes_on_and_the_catalog_equals_the_reference(
    full: Outcome, reference: Outcome
) -> None:
    assert full.extra["puts_after"] > full.extra["disk"].puts_before
    assert full.extra["files_at_end"] != full.extra["disk"].files_at_fill
    # A lane that changed hands while its snapshot was refused is read again from
    # the older snapshot: the ranges' counters go back (reset_lane_ranges), the
    # throughput rollup counts the headers read again. Everything else is equal.
    harness.assert_same_outcome(full, reference, reread=True)
    assert full.extra["stuck_leases"] == []
    assert full.extra["held_lanes"] == []
    assert full.extra["exits"] == dict.fromkeys(full.extra["exits"], 0)


def test_stale_epochs_and_replays_during_the_fault_get_their_documented_answers(
    full: Outcome,
) -> None:
    clients.assert_documented_answers(full.extra["troublemaker"])
