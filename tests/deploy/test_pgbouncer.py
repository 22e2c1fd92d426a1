"""The coordinator behind PgBouncer in session mode, the supported pooling shape.

Debian's PgBouncer in front of a throwaway PostgreSQL of the machine's own
(tests/support/system_postgres.py), migrated directly; then the coordinator's
`default` connects through PgBouncer (prepared statements on, as deployed) and
runs a range lease, a batch that makes a release under its key's advisory
lock, the finish, and the snapshot upload guard, whose session advisory lock
keeps a second upload of the same lane and epoch out. In transaction mode
that lock would belong to whatever client next got the server session; see
docs/deploy.md.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connections
from django.db.backends.postgresql.base import DatabaseWrapper

from catalog.models import Release
from core.errors import UploadInProgress
from leases.upload_guard import Holder, UploadGuards, one_upload
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import SeedRangeFactory
from tests.support.net import free_port
from tests.support.system_postgres import SystemPostgres
from usenet.numbers import ascii_digits

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
PGBOUNCER = "/usr/sbin/pgbouncer"
DATABASE = "bounced"


class SessionPgBouncer:
    """PgBouncer in session mode on 127.0.0.1, in front of one SystemPostgres database."""

    def __init__(self, server: SystemPostgres) -> None:
        self.server = server
        self.port = free_port()
        self.ini = server.root / f"pgbouncer-{self.port}.ini"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> SessionPgBouncer:
        self.ini.write_text(
            "[databases]\n"
            f"{DATABASE} = host={self.server.root} dbname={DATABASE} user=postgres\n"
            "[pgbouncer]\n"
            f"listen_addr = 127.0.0.1\nlisten_port = {self.port}\nunix_socket_dir =\n"
            "auth_type = any\nadmin_users = postgres\npool_mode = session\nmax_client_conn = 50\n"
            "default_pool_size = 20\nignore_startup_parameters = extra_float_digits,options\n"
            f"logfile = {self.server.root / f'pgbouncer-{self.port}.log'}\n"
        )
        if os.geteuid() == 0:
            os.chown(self.ini, *_postgres_ids())
        # Its own process group: as root it runs under runuser, whose child
        # pgbouncer outlived a kill of runuser alone (an orphan per run).
        self.process = subprocess.Popen(
            [*self.server._as_user, PGBOUNCER, str(self.ini)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + 20
        while True:
            try:
                psycopg.connect(**self.conninfo(), connect_timeout=2).close()
                return self
            except psycopg.OperationalError:
                assert self.process.poll() is None, "pgbouncer exited"
                assert time.monotonic() < deadline, "pgbouncer did not start"
                time.sleep(0.1)

    def conninfo(self) -> dict[str, Any]:
        return {"host": "127.0.0.1", "port": self.port, "user": "postgres", "dbname": DATABASE}

    def clients(self) -> list[str]:
        """The databases of the clients connected now (PgBouncer's SHOW CLIENTS)."""
        info = {**self.conninfo(), "dbname": "pgbouncer"}
        with psycopg.connect(**info, autocommit=True, prepare_threshold=None) as admin:
            cursor = admin.execute("SHOW CLIENTS")
            names = [column.name for column in cursor.description or []]
            return [row[names.index("database")] for row in cursor.fetchall()]

    def stop(self) -> None:
        if self.process is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


def running_with(path: Path) -> list[int]:
    """The processes whose command line names `path`."""
    found = []
    for proc in Path("/proc").iterdir():
        if ascii_digits(proc.name):
            with contextlib.suppress(OSError):
                if str(path).encode() in (proc / "cmdline").read_bytes():
                    found.append(int(proc.name))
    return found


def _postgres_ids() -> tuple[int, int]:
    import pwd

    user = pwd.getpwnam("postgres")
    return user.pw_uid, user.pw_gid


@pytest.fixture(scope="module")
def bouncer(django_db_setup: None) -> Iterator[SessionPgBouncer]:
    with SystemPostgres() as server:
        with psycopg.connect(**server.conninfo(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        env = {**os.environ, "DATABASE_URL": server.url(DATABASE), "SECRET_KEY": "bouncer"}
        env.pop("DJANGO_SETTINGS_MODULE", None)
        migrate = subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        assert migrate.returncode == 0, migrate.stderr
        pool = SessionPgBouncer(server).start()
        try:
            yield pool
        finally:
            pool.stop()


@pytest.fixture
def through_bouncer(bouncer: SessionPgBouncer) -> Iterator[SessionPgBouncer]:
    """The coordinator's `default` connects through PgBouncer for one test."""
    test_database = connections["default"]
    test_database.close()
    info = bouncer.conninfo()
    config = connections.configure_settings(
        {
            "default": {
                "ENGINE": "django.db.backends.postgresql",
                "NAME": info["dbname"],
                "USER": info["user"],
                "HOST": info["host"],
                "PORT": info["port"],
                "CONN_MAX_AGE": 60,
                "OPTIONS": {"server_side_binding": True, "prepare_threshold": 2},
            }
        }
    )
    connections["default"] = DatabaseWrapper(config["default"])
    try:
        yield bouncer
    finally:
        connections["default"].close()
        connections["default"] = test_database


def test_a_lease_a_batch_and_a_finish_go_through_pgbouncer_in_session_mode(
    through_bouncer: SessionPgBouncer, node_client: Callable[..., Any]
) -> None:
    SeedRangeFactory(start_id=1, end_id=100)
    node = node_client()
    lease = node.lease()
    name = "Bounced.Show.S01E01.720p.WEB-GRP"
    batch = {
        "epoch": lease["epoch"],
        "next": 101,
        "headers": 100,
        "files": [
            {
                "subject": f'[1/2] - "{name}.part01.rar" yEnc (1/1)',
                "poster": "p <p@p>",
                "date": 1_700_000_000,
                "total": 1,
                "segments": [[1, 1, "<b1@x>", 1000]],
            }
        ],
        "fragments": [],
    }
    for _ in range(3):  # a replay, and enough calls for psycopg to prepare the statements
        answer = node.post(f"/api/v1/ranges/{lease['id']}/batch", batch)
        assert answer.status_code == 200, answer.content
    finish = node.post(f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]})
    assert finish.status_code in (200, 204), finish.content
    assert SeedRange.objects.get(id=lease["id"]).status == RangeStatus.DONE
    assert Release.objects.filter(name__startswith="Bounced.Show").count() == 1
    assert DATABASE in through_bouncer.clients()  # the coordinator's session, pooled


def test_the_upload_guards_session_lock_holds_through_pgbouncer(
    through_bouncer: SessionPgBouncer,
) -> None:
    holder = Holder(lane_id=1, node_id=1, epoch=7)
    first, second = UploadGuards(), UploadGuards()  # two workers' guard sessions
    with one_upload(holder, guards=first):
        with pytest.raises(UploadInProgress), one_upload(holder, guards=second):
            pass
    with one_upload(holder, guards=second):  # released with the first upload
        pass


def test_a_stopped_pgbouncer_leaves_no_process_behind(bouncer: SessionPgBouncer) -> None:
    # As root it runs under runuser: killing that alone left pgbouncer running.
    second = SessionPgBouncer(bouncer.server).start()
    assert running_with(second.ini)
    second.stop()
    assert running_with(second.ini) == []
