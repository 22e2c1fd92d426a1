"""`make bench` runs whole: every bench it lists, at tiny sizes, exits 0 and prints figures.

A bench that cannot run is a broken test. This one keeps them from rotting
(bench_agent once stopped on an attribute the overview-source refactor
renamed): each bench of the Makefile's `bench` target needs an entry in
SMOKE below, so a new bench gets its smoke run when it is added there.
The figures at these sizes mean nothing; only that the code runs does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The smallest sizes at which each bench still runs every one of its phases.
SMOKE: dict[str, list[str]] = {
    "bench_lease.py": [
        "--sizes",
        "1000",
        "--ranges",
        "2000",
        "--warmup",
        "10",
        "--seconds",
        "0.2",
        "--connections",
        "1",
    ],
    "bench_aggregate.py": ["--lines", "2000", "--repeat", "1"],
    "bench_planning.py": ["--articles", "2000", "--groups", "5", "--ranges", "20", "--repeat", "1"],
    "bench_group_lease.py": ["--groups", "20", "--ranges", "2000", "--runs", "20"],
    "bench_dashboard.py": ["--groups", "10", "--ranges", "200", "--nodes", "5", "--renders", "2"],
    "bench_catalog.py": ["--batches", "2", "--stored", "5000", "--rounds", "1", "--lookups", "5"],
    "bench_agent.py": [
        "--lines",
        "3000",
        "--batch-headers",
        "500",
        "--repeat",
        "1",
        "--leases",
        "1",
    ],
    "bench_reading_cpu.py": ["--headers", "2000", "--rounds", "1", "--passes", "1"],
    "bench_held_lane.py": ["--ranges", "2000", "--leases", "3"],
    "bench_names.py": ["--repeat", "1", "--max-size", "1000"],
    "bench_inspect.py": [
        "--max-size",
        "10000",
        "--seconds",
        "0.01",
        "--releases",
        "2",
        "--part-size",
        "20000",
        "--rounds",
        "1",
        "--fleet-seconds",
        "0",
        "--cost",
        "2",
    ],
    # --rebuild: the load runs each time (a kept dataset would skip it).
    "bench_search.py": ["--releases", "2000", "--queries", "3", "--explain", "1", "--rebuild"],
    "bench_batch_fixed.py": ["--sizes", "50", "100", "--batches", "2", "--rounds", "1"],
    "bench_issue27.py": [
        *("--fleet-seconds", "0.5", "--fleet-nodes", "4", "--fleet-rounds", "1"),
        *("--fleet-groups", "10", "--fleet-ranges-per-group", "10"),
        *("--seconds", "0.1", "--rounds", "1", "--tokens", "3", "--repeat", "2"),
        *("--sizes", "50", "100", "--groups", "10", "--ranges-per-group", "10"),
        *("--e2e-articles", "2000", "--e2e-range-size", "500", "--e2e-repeat", "1"),
    ],
}


def make_bench_scripts() -> list[str]:
    """The bench scripts the Makefile's `bench` target runs, in its order."""
    text = (ROOT / "Makefile").read_text()
    # The recipe: its tab-indented lines, and make's comment lines between them.
    target = re.search(r"^bench:[^\n]*\n((?:[\t#][^\n]*\n)+)", text, re.MULTILINE)
    assert target, "the Makefile has no bench target"
    return re.findall(r"bench/(bench_\w+\.py)", target.group(1))


def test_every_bench_of_make_bench_has_a_smoke_run() -> None:
    scripts = make_bench_scripts()
    assert scripts, "make bench lists no bench"
    missing = [s for s in scripts if s not in SMOKE]
    assert not missing, f"add smoke sizes to tests/test_bench_smoke.py SMOKE for {missing}"
    stale = sorted(set(SMOKE) - set(scripts))
    assert not stale, f"SMOKE names benches make bench does not run: {stale}"


@pytest.mark.slow
@pytest.mark.parametrize("script", make_bench_scripts())
def test_bench_runs_at_tiny_sizes(script: str) -> None:
    env = dict(os.environ)
    # A bench empties the tables of the database it is given: never the one
    # DATABASE_URL names. Each uses a database of its own on the embedded server.
    env.pop("DATABASE_URL", None)
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *SMOKE[script]],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    figures = [line for line in done.stdout.splitlines() if re.search(r"\d", line)]
    assert len(figures) >= 2, f"{script} printed no figures:\n{done.stdout}"
