"""A coordinator under gunicorn and seed-node agents as subprocesses, for end-to-end tests.

Each ``Fleet`` gets a database of its own on the test PostgreSQL server (the
embedded one, or the server DATABASE_URL points at), migrated by ``manage.py
migrate``, so two runs can be compared side by side and module-scoped fixtures
are not flushed by transactional tests.
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import psycopg
from django.conf import settings

from tests.support.net import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
LEASE_TTL_SECONDS = 6


def server_params() -> dict[str, Any]:
    """How to reach the test PostgreSQL server (starting the embedded one if needed)."""
    db = settings.DATABASES["default"]
    if settings.EMBEDDED_DATABASE:
        from core.embedded_postgres.server import ensure_started

        return {"host": ensure_started(Path(db["EMBEDDED_DIR"])), "user": "postgres"}
    params = {"host": db["HOST"] or "localhost", "user": db["USER"], "password": db["PASSWORD"]}
    if db.get("PORT"):
        params["port"] = int(db["PORT"])
    return params


@contextmanager
def fresh_database() -> Iterator[tuple[str, dict[str, Any]]]:
    """A new empty database; yields (DATABASE_URL, psycopg connect kwargs); dropped after."""
    params = server_params()
    name = f"e2e_fleet_{secrets.token_hex(4)}"
    with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    user = quote(params["user"] or "", safe="")
    password = f":{quote(params['password'], safe='')}" if params.get("password") else ""
    if params["host"].startswith("/"):
        url = f"postgres://{user}{password}@/{name}?host={quote(params['host'], safe='/')}"
    else:
        port = f":{params['port']}" if params.get("port") else ""
        url = f"postgres://{user}{password}@{params['host']}{port}/{name}"
    try:
        yield url, {**params, "dbname": name}
    finally:
        with psycopg.connect(dbname="postgres", autocommit=True, **params) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


class Fleet:
    """The coordinator (gunicorn) and its agents; ``sql`` reads its database."""

    def __init__(
        self,
        database_url: str,
        conninfo: dict[str, Any],
        workdir: Path,
        news_server_url: str = "",
    ) -> None:
        self.database_url = database_url
        self.news_server_url = news_server_url
        self.conninfo = conninfo
        self.workdir = workdir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.gunicorn: subprocess.Popen[bytes] | None = None
        self.agents: dict[str, subprocess.Popen[bytes]] = {}
        self.tokens: dict[str, Path] = {}
        # Several hosts (tests/e2e/test_several_hosts.py): settings shared by the
        # servers (SNAPSHOT_DIR), and every coordinator URL the agents are given.
        self.server_env: dict[str, str] = {}
        self.agent_urls: list[str] = [self.url]

    # --- the coordinator --------------------------------------------------------

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("SEED_")}
        env.update(
            DATABASE_URL=self.database_url,
            SECRET_KEY="test-fleet-coordinator-key",
            NEWS_SERVER_URL=self.news_server_url,
            PYTHONPATH=str(ROOT),
        )
        env.update(extra)  # may set PYTHONPATH too (tests/chaos/clocks.py)
        return env

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def python(self, code: str, *args: str) -> str:
        """Run Django code against the fleet's database in a separate process."""
        script = "import django, sys; django.setup()\n" + code
        result = subprocess.run(
            [sys.executable, "-c", script, *args],
            cwd=ROOT,
            env=self.env(DJANGO_SETTINGS_MODULE="coordinator.settings"),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout

    def start(self) -> None:
        self.manage("migrate", "--no-input", "-v", "0")
        log = (self.workdir / "gunicorn.log").open("wb")
        self.gunicorn = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "coordinator.wsgi",
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                "4",
                "--timeout",
                "60",
            ],
            cwd=ROOT,
            env=self.env(
                LEASE_TTL_SECONDS=str(LEASE_TTL_SECONDS),
                LEASE_RETRY_AFTER_SECONDS="1",
                **self.server_env,
            ),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: kill_server takes the workers too
        )
        deadline = time.monotonic() + 120  # workers boot slowly on a loaded CI box
        while time.monotonic() < deadline:
            try:
                # /healthz, not the schema: on a loaded machine the schema takes seconds.
                urllib.request.urlopen(self.url + "/healthz", timeout=10).close()
                return
            except (urllib.error.URLError, OSError):
                assert self.gunicorn.poll() is None, self.log("gunicorn.log")
                time.sleep(0.2)
        raise AssertionError("gunicorn did not come up:\n" + self.log("gunicorn.log"))

    def kill_server(self) -> None:
        """SIGKILL gunicorn and its workers at once, as a host that dies would."""
        assert self.gunicorn is not None
        os.killpg(self.gunicorn.pid, signal.SIGKILL)
        self.gunicorn.wait()

    def has_path(self, fragment: str) -> bool:
        """Whether the coordinator's API schema lists a path containing ``fragment``."""
        with urllib.request.urlopen(self.url + "/api/v1/schema/?format=json", timeout=10) as r:
            text = r.read().decode()
        return fragment in text

    def issue_token(self, name: str) -> Path:
        token = self.manage("issue_token", name).strip().splitlines()[-1]
        path = self.workdir / f"{name}.token"
        path.write_text(token + "\n")
        self.tokens[name] = path
        return path

    def plan(self, groups: Sequence[str], days: int, size: int) -> dict[str, list[tuple[int, int]]]:
        """Plan the groups from the news server as an operator would; the planned spans."""
        self.python(
            "from indexer.models import Group\n"
            "for name in sys.argv[1:]:\n"
            "    Group.objects.get_or_create(name=name)\n",
            *groups,
        )
        self.manage("plan_seed", *groups, "--days", str(days), "--size", str(size))
        spans: dict[str, list[tuple[int, int]]] = {}
        for name, start, end in self.sql(
            "SELECT g.name, r.start_id, r.end_id FROM seed_range r "
            "JOIN news_group g ON g.id = r.group_id ORDER BY g.name, r.start_id"
        ):
            spans.setdefault(name, []).append((start, end))
        return spans

    # --- agents -----------------------------------------------------------------

    def start_agent(
        self, name: str, *args: str, env_extra: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        token = self.tokens.get(name) or self.issue_token(name)
        log = (self.workdir / f"{name}.log").open("wb")
        env = {**self.env(), **(env_extra or {})}
        env.pop("DATABASE_URL")  # an agent needs no database, and must not find one
        process = subprocess.Popen(
            [
                str(BIN / "seed-node"),
                "--coordinator",
                ",".join(self.agent_urls),
                "--token-file",
                str(token),
                "--heartbeat-seconds",
                "1",
                "--batch-seconds",
                "1",
                "--log-interval",
                "5",
                "--max-backoff",
                "2",
                "--work-dir",
                str(self.workdir),
                *args,
            ],
            cwd=self.workdir,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.agents[name] = process
        return process

    def stop_agent(self, name: str, timeout: float = 60) -> int:
        process = self.agents[name]
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            raise AssertionError(f"{name} ignored SIGTERM:\n{self.log(name + '.log')}") from None

    def log(self, name: str) -> str:
        path = self.workdir / name
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    def stop(self) -> None:
        for process in self.agents.values():
            if process.poll() is None:
                process.kill()
                process.wait()
        if self.gunicorn is not None and self.gunicorn.poll() is None:
            self.gunicorn.terminate()
            try:
                self.gunicorn.wait(15)
            except subprocess.TimeoutExpired:
                self.gunicorn.kill()
                self.gunicorn.wait()

    # --- reading the outcome ----------------------------------------------------

    def sql(self, query: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with psycopg.connect(**self.conninfo) as conn:
            return conn.execute(query, params).fetchall()

    def api(self, path: str, token_name: str) -> Any:
        token = self.tokens[token_name].read_text().strip()
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def nzb(self, path: str, token_name: str) -> bytes:
        token = self.tokens[token_name].read_text().strip()
        request = urllib.request.Request(
            self.url + path, headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.headers["Content-Type"].startswith("application/x-nzb")
            return response.read()

    def catalog(self, token_name: str) -> list[dict[str, Any]]:
        """Every catalog file, following the pages of GET /api/v1/files."""
        files: list[dict[str, Any]] = []
        path: str | None = "/api/v1/files"
        while path:
            page = self.api(path, token_name)
            files.extend(page["results"])
            following = page.get("next")
            path = following[len(self.url) :] if following else None
            if following and following.startswith("/"):
                path = following
        return files

    def execute(self, statement: str, params: Sequence[Any] = ()) -> int:
        """Run a statement that returns no rows (an UPDATE, say); its row count."""
        with psycopg.connect(**self.conninfo) as conn:
            return conn.execute(statement, params).rowcount

    def metrics(self) -> str:
        """/metrics, as Prometheus scrapes it from loopback."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=30) as response:
            return response.read().decode()

    def admin_session(self, username: str = "e2e-admin") -> AdminSession:
        """A staff user of the console, logged in through the admin's login form."""
        password = secrets.token_urlsafe(16)
        self.python(
            "from django.contrib.auth import get_user_model\n"
            "get_user_model().objects.create_superuser(sys.argv[1], '', sys.argv[2])\n",
            username,
            password,
        )
        return AdminSession(self.url, username, password)


class AdminSession:
    """A browser's side of the admin: a cookie jar with the session and the CSRF token."""

    def __init__(self, base_url: str, username: str, password: str) -> None:
        self.base_url = base_url
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.get("/admin/login/")
        self.post("/admin/login/", {"username": username, "password": password, "next": "/admin/"})
        assert any(cookie.name == "sessionid" for cookie in self.jar), "the admin login failed"

    def get(self, path: str) -> str:
        with self.opener.open(self.base_url + path, timeout=30) as response:
            return response.read().decode()

    def post(self, path: str, data: dict[str, str]) -> str:
        """Submit a form (redirects followed); the page it ends on."""
        token = next(cookie.value for cookie in self.jar if cookie.name == "csrftoken")
        body = urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        with self.opener.open(self.base_url + path, body, timeout=30) as response:
            return response.read().decode()
