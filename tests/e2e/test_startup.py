"""Two coordinator hosts started at once on a fresh database: both serve, one migrates.

`serve` migrates and creates the admin login under a PostgreSQL advisory
lock (core/startup.py); `serve --no-migrate` leaves the schema alone.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import psycopg
import pytest

from tests.support.fleet import ROOT, fresh_database
from tests.support.net import free_port

pytestmark = pytest.mark.e2e


def start_serve(
    database_url: str, data_dir: Path, *extra: str
) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    log = (data_dir.parent / f"{data_dir.name}.log").open("wb")
    env = {
        "PATH": str(Path(sys.executable).parent) + ":/usr/bin:/bin",
        "DATABASE_URL": database_url,
        "DATA_DIR": str(data_dir),
        "SECRET_KEY": "test-startup-key",
        "PYTHONPATH": str(ROOT),
    }
    process = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "1",
            *extra,
        ],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    return process, f"http://127.0.0.1:{port}"


def wait_until_serving(process: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert process.poll() is None, log.read_text(errors="replace")
        try:
            urllib.request.urlopen(url + "/api/v1/schema/", timeout=2).close()
            return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    raise AssertionError("serve did not come up:\n" + log.read_text(errors="replace"))


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_two_hosts_starting_together_both_serve_and_one_migrates(tmp_path: Path) -> None:
    with fresh_database() as (url, conninfo):
        hosts = [start_serve(url, tmp_path / f"host{n}") for n in (1, 2)]
        try:
            for n, (process, base) in enumerate(hosts, start=1):
                wait_until_serving(process, base, tmp_path / f"host{n}.log")
        finally:
            for process, _ in hosts:
                stop(process)
        logs = [(tmp_path / f"host{n}.log").read_text(errors="replace") for n in (1, 2)]
        assert sum("migration(s)." in log for log in logs) == 1, logs
        assert sum("The schema is up to date." in log for log in logs) == 1, logs
        assert sum("Admin login created" in log for log in logs) == 1, logs
        with psycopg.connect(**conninfo) as conn:
            (admins,) = conn.execute("SELECT count(*) FROM auth_user WHERE is_superuser").fetchone()
        assert admins == 1


def test_serve_no_migrate_serves_a_schema_migrated_by_a_separate_step(tmp_path: Path) -> None:
    with fresh_database() as (url, conninfo):
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT,
            env={
                "DATABASE_URL": url,
                "DATA_DIR": str(tmp_path / "migrate"),
                "SECRET_KEY": "test-startup-key",
                "PATH": "/usr/bin:/bin",
            },
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert migrate.returncode == 0, migrate.stderr
        process, base = start_serve(url, tmp_path / "host", "--no-migrate")
        try:
            wait_until_serving(process, base, tmp_path / "host.log")
        finally:
            stop(process)
        log = (tmp_path / "host.log").read_text(errors="replace")
        assert "migration" not in log and "Admin login" not in log, log
        with psycopg.connect(**conninfo) as conn:
            (admins,) = conn.execute("SELECT count(*) FROM auth_user").fetchone()
        assert admins == 0
