"""Periodic upkeep: `manage.py maintain`, once and in a loop, and the lease path's own runs.

Time moves in the database (backdated heartbeats, rollup minutes written in
the past) and, for the per-process intervals, by forgetting the tasks' last
runs; nothing sleeps longer than a loop's 10 ms pause.
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from seeding import maintenance
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory

pytestmark = pytest.mark.django_db

QUIET = 900 + 60  # past the default LEASE_TTL_SECONDS


@pytest.fixture(autouse=True)
def _quiet_upkeep(settings: Any, tmp_path: Path) -> None:
    """Nothing is due when a test starts; the leases app's task sweeps a temporary folder."""
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    maintenance.mark_all_run()


def quiet_lease(node_client: Any, backdate: Any) -> tuple[Any, dict[str, Any]]:
    """A new range, leased to a node whose heartbeat is older than the TTL."""
    SeedRangeFactory()
    node = node_client()
    lease = node.lease()
    assert lease is not None
    backdate(lease["id"], QUIET)
    return node, lease


def rollup_minutes(node_id: int, group_id: int, hours_ago: int, headers: int) -> Any:
    """A minute of throughput `hours_ago` hours back; returns the start of that hour."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
            " VALUES (date_trunc('hour', now()) - make_interval(hours => %s)"
            "         + interval '10 minutes', %s, %s, %s, 1)"
            " RETURNING date_trunc('hour', bucket)",
            [hours_ago, node_id, group_id, headers],
        )
        return cursor.fetchone()[0]


def folded(hour: Any) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT headers FROM header_rollup_hour WHERE hour = %s", [hour])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def test_maintain_retires_a_quiet_lease_and_folds_an_hour(node_client, backdate):
    node, lease = quiet_lease(node_client, backdate)
    hour = rollup_minutes(node.node.id, SeedRange.objects.get(id=lease["id"]).group_id, 2, 321)
    assert folded(hour) is None

    out = StringIO()
    call_command("maintain", stdout=out)

    retired = SeedRange.objects.get(id=lease["id"])
    assert (retired.status, retired.next_id) == (RangeStatus.QUEUED, lease["start"])
    assert folded(hour) == 321
    text = out.getvalue()
    assert re.search(r"quiet range leases retired\s+1\b", text), text
    assert re.search(r"rollup hours folded\s+[1-9]", text), text
    assert "stale snapshot parts removed" in text  # the leases app registered its task


def test_maintain_every_loops_and_shows_each_round(node_client, backdate):
    quiet_lease(node_client, backdate)
    out = StringIO()
    result = call_command("maintain", every=0.01, rounds=3, stdout=out)
    rounds = re.findall(r"^round (\d+) .*quiet range leases retired: (\d+)", out.getvalue(), re.M)
    # The first round takes the lease back; later rounds find nothing left to do.
    assert rounds == [("1", "1"), ("2", "0"), ("3", "0")]
    assert "Stopped after 3 round(s)." in result


def test_maintain_every_stops_on_sigterm():
    out = StringIO()
    previous = signal.getsignal(signal.SIGTERM)

    def terminate_after_two_rounds() -> None:
        deadline = time.monotonic() + 60
        while "round 2 " not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(os.getpid(), signal.SIGTERM)

    killer = threading.Thread(target=terminate_after_two_rounds)
    killer.start()
    # --rounds only bounds the test should the signal never arrive.
    result = call_command("maintain", every=0.01, rounds=5000, stdout=out)
    killer.join()
    done = int(re.search(r"Stopped after (\d+) round", result)[1])
    assert 2 <= done < 5000
    assert signal.getsignal(signal.SIGTERM) is previous  # the handler is put back


def test_maintain_refuses_bad_options():
    with pytest.raises(CommandError, match="--every"):
        call_command("maintain", every=0)
    with pytest.raises(CommandError, match="--rounds"):
        call_command("maintain", rounds=2)


def test_a_failing_task_is_reported_and_the_others_still_run(node_client, backdate, monkeypatch):
    _node, lease = quiet_lease(node_client, backdate)

    def boom() -> int:
        raise OSError("disk on fire")

    monkeypatch.setitem(maintenance._tasks, "boom", maintenance.Task("boom", "booms", boom, 1.0))
    out = StringIO()
    with pytest.raises(CommandError, match="failed"):
        call_command("maintain", stdout=out)
    assert "disk on fire" in out.getvalue()
    assert SeedRange.objects.get(id=lease["id"]).status == RangeStatus.QUEUED


def test_a_lease_call_retires_a_quiet_lease_with_no_maintain_process(node_client, backdate):
    first, lease = quiet_lease(node_client, backdate)
    SeedRangeFactory(start_id=lease["end"] + 1, end_id=lease["end"] + 1000)
    other = node_client()

    # The periodic upkeep ran a moment ago in this process: the quiet lease
    # stays where it is and the other node gets the queued range.
    assert other.lease()["id"] != lease["id"]
    assert SeedRange.objects.get(id=lease["id"]).node_id == first.node.id

    # Its interval has passed: the next call takes the quiet lease back first.
    SeedRangeFactory(start_id=lease["end"] + 1001, end_id=lease["end"] + 2000)
    maintenance.forget_last_runs()
    assert other.lease() is not None
    taken_back = SeedRange.objects.get(id=lease["id"])
    assert (taken_back.status, taken_back.node_id) != (RangeStatus.LEASED, first.node.id)
    fenced = first.post(f"/api/v1/ranges/{lease['id']}/heartbeat", {"epoch": lease["epoch"]})
    assert fenced.status_code == 409


def test_stale_snapshot_parts_are_removed_and_snapshots_kept(settings):
    folder = Path(settings.SNAPSHOT_DIR)
    folder.mkdir(parents=True)
    stale, fresh, snapshot = (
        folder / "alt.binaries.x.gz.3.part",
        folder / "alt.binaries.x.gz.4.part",
        folder / "alt.binaries.x.gz",
    )
    for path in (stale, fresh, snapshot):
        path.write_bytes(b"window")
    long_ago = time.time() - 2 * settings.LEASE_TTL_SECONDS - 60
    for path in (stale, snapshot):
        os.utime(path, (long_ago, long_ago))

    out = StringIO()
    call_command("maintain", stdout=out)

    assert re.search(r"stale snapshot parts removed\s+1\b", out.getvalue())
    assert (stale.exists(), fresh.exists(), snapshot.exists()) == (False, True, True)
