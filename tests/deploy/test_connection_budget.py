"""`serve` refuses workers x threads that could open more PostgreSQL sessions than the
server allows (each thread keeps its own; past max_connections, calls answer 503 and
`maintain` cannot connect). Measured with bench/bench_fleet.py: docs/performance.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.startup import connection_budget_problem
from tests.e2e.test_startup import start_serve, stop
from tests.support.fleet import fresh_database


@pytest.mark.django_db
def test_the_default_web_server_fits_and_an_oversized_one_is_named() -> None:
    assert connection_budget_problem(3, 8) is None
    problem = connection_budget_problem(4, 400)
    assert problem is not None
    assert "4 workers x 400 threads may open 1608 PostgreSQL sessions" in problem
    assert "max_connections" in problem and "WEB_THREADS" in problem


@pytest.mark.e2e
def test_serve_with_too_many_threads_stops_before_serving(tmp_path: Path) -> None:
    with fresh_database() as (database_url, _conninfo):
        process, _url = start_serve(database_url, tmp_path / "host", "--threads", "400")
        try:
            code = process.wait(90)
        except subprocess.TimeoutExpired:
            code = None  # serving: the old behaviour
        finally:
            stop(process)
        log = (tmp_path / "host.log").read_text(errors="replace")
    assert code not in (None, 0), log
    assert "1 workers x 400 threads may open 402 PostgreSQL sessions" in log
    assert "Serving on" not in log
