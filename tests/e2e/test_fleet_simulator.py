"""The fleet simulator (console/fleet_simulator.py) against a real `manage.py serve`.

A smoke test so the tool behind bench/bench_fleet.py cannot rot: five
simulated nodes for a few seconds store batches, lease lanes, and see no 5xx
and no call without an answer; `manage.py simulate_fleet` prints its tables.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from console.fleet_simulator import Profile, run_blocking, run_fleet
from tests.e2e.fleet import ROOT, fresh_database
from tests.e2e.test_startup import start_serve, stop, wait_until_serving

pytestmark = pytest.mark.e2e

PLAN = """
INSERT INTO news_group (name, active, priority, created_at)
SELECT 'alt.binaries.sim.' || g, true, 100, now() FROM generate_series(1, 3) AS g;
INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                        epoch, attempts, headers, files, fragments, error, created_at)
SELECT g.id, 1 + n * 300, (n + 1) * 300, 1 + n * 300, 'queued', 100, false,
       0, 0, 0, 0, 0, '', now()
  FROM news_group g, generate_series(0, 199) AS n;
"""


def manage(database_url: str, *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={"PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
             "DATABASE_URL": database_url, "SECRET_KEY": "test-sim-key", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_five_nodes_store_batches_without_a_5xx(tmp_path: Path) -> None:
    with fresh_database() as (database_url, conninfo):
        manage(database_url, "migrate", "--no-input", "-v", "0")
        with psycopg.connect(**conninfo) as conn:
            conn.execute(PLAN)
        tokens = [manage(database_url, "issue_token", f"sim-{i}").split()[-1] for i in range(3)]
        process, url = start_serve(database_url, tmp_path / "host", "--no-migrate")
        try:
            wait_until_serving(process, url, tmp_path / "host.log")
            profile = Profile(files=4, segments=5, lane_share=0.4)
            stats = run_blocking(run_fleet(url, tokens, 5, 4.0, profile, timeout=30))
            pings = run_blocking(run_fleet(url, tokens, 5, 1.0, profile, ping=True, timeout=30))
            (tmp_path / "tokens").write_text("\n".join(tokens) + "\n")
            printed = manage(
                database_url, "simulate_fleet", "--url", url, "--tokens", str(tmp_path / "tokens"),
                "--nodes", "3", "--seconds", "2", "--files", "2", "--segments", "3", "--ping",
            )  # fmt: skip
        finally:
            stop(process)
        with psycopg.connect(**conninfo) as conn:
            files = conn.execute("SELECT count(*) FROM catalog_file").fetchone()
    errors = stats.errors()
    assert not [code for code in errors if not code.startswith("4")], errors
    assert stats.batches > 0 and stats.segments == stats.batches * 4 * 5
    assert stats.leases > 0 and stats.latencies["lane_next"], stats.answers
    # The simulated windows are snapshots the coordinator takes (it checks each one).
    puts = {code for (endpoint, code) in stats.answers if endpoint == "snapshot_put"}
    assert puts <= {"204", "429"}, stats.answers
    assert files is not None and files[0] > 0  # the batches reached the catalog
    assert pings.calls() > 0 and not pings.errors()
    assert "| mix 3" in printed and "| ping 3" in printed and "batch" in printed


def test_the_simulator_runs_from_a_thread_that_already_runs_an_event_loop() -> None:
    """Under Playwright's sync API (the browser tests) the main thread runs a loop."""

    async def answer() -> int:
        return 42

    async def inside_a_loop() -> int:
        return run_blocking(answer())

    # In a thread of its own: this test's thread may run one already (see above).
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(asyncio.run, inside_a_loop()).result() == 42
