"""A PostgreSQL cluster under Patroni, with one etcd, for tests of failover.

The cluster runs the deployment's own files as they are: deploy/patroni/etcd.env
(etcd's settings, read as Debian's /etc/default/etcd) and
deploy/patroni/patroni.yml (each member's Patroni). A test changes only what
differs on one machine: names, loopback addresses on free ports, and
directories under a temporary root, through the environment variables etcd and
Patroni read over their files (PATRONI_NAME, PATRONI_POSTGRESQL_LISTEN, ...).

    with PatroniCluster(members=2) as cluster:
        leader = cluster.wait_for_leader()
        url = cluster.database_url()   # libpq's multi-host form, read-write
        cluster.kill_member(leader)    # Patroni and its PostgreSQL, SIGKILLed together
        cluster.wait_for_leader(other_than=leader)

Every process runs in a process group of its own (etcd, each Patroni, and each
postmaster, which Patroni starts in a session of its own), and stopping the
cluster SIGKILLs every group it ever started, then any process still running
out of the temporary root: a failed test leaves nothing behind. A test process
that dies without stopping it (SIGKILLed, out of memory) leaves nothing either:
a reaper started with the cluster waits on a pipe from it, and when the pipe
closes it SIGKILLs every process whose working directory or command line is
under the root, then removes the root.

As root, etcd, Patroni and PostgreSQL run as the `postgres` user (PostgreSQL
refuses root). `.ci/install-patroni` installs Patroni and etcd.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import psycopg
import pytest

from tests.support.net import LOOPBACK, free_port
from tests.support.system_postgres import RUN_AS, system_bin_dir
from usenet.numbers import ascii_digits

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "patroni"
PATRONI_YML = DEPLOY / "patroni.yml"
ETCD_ENV = DEPLOY / "etcd.env"
PATRONI = shutil.which("patroni") or "/usr/bin/patroni"
PATRONICTL = shutil.which("patronictl") or "/usr/bin/patronictl"
ETCD = shutil.which("etcd") or "/usr/bin/etcd"
PGBOUNCER_INI = DEPLOY / "pgbouncer.ini"
PGBOUNCER_HBA = DEPLOY / "pgbouncer_hba.conf"
RECONNECT_CALLBACK = DEPLOY / "pgbouncer-reconnect"
PGBOUNCER = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"

# The passwords the deployment keeps out of patroni.yml (its environment gives them).
SUPERUSER = ("postgres", "test-superuser-password")
PASSWORDS = {
    "PATRONI_SUPERUSER_PASSWORD": SUPERUSER[1],
    "PATRONI_REPLICATION_PASSWORD": "test-replication-password",
    "PATRONI_REWIND_PASSWORD": "test-rewind-password",
    "PATRONI_RESTAPI_USERNAME": "patroni",
    "PATRONI_RESTAPI_PASSWORD": "test-restapi-password",
}
# The coordinator's role and database, made as docs/deploy.md tells an operator to.
APP_USER = ("coordinator", "test-coordinator-password")
APP_DATABASE = "coordinator"

START_TIMEOUT = 120.0  # initdb, the first leader and a replica's base backup on a loaded box


def installed() -> bool:
    """Whether Patroni and etcd are on this machine (`.ci/install-patroni`)."""
    return all(Path(tool).exists() for tool in (PATRONI, PATRONICTL, ETCD))


def read_env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines, as systemd's EnvironmentFile reads them (no quotes used here)."""
    values: dict[str, str] = {}
    for line in path.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            values[key.strip()] = value.strip()
    return values


@dataclass
class Member:
    """One PostgreSQL under its Patroni: `port` is PostgreSQL's, `api_port` Patroni's REST API."""

    name: str
    port: int
    api_port: int
    data_dir: Path
    log: Path
    process: subprocess.Popen[bytes] | None = None
    bouncer_port: int = 0  # its PgBouncer's (started by start_pgbouncers)
    postmasters: set[int] = field(default_factory=set)  # every one seen, for the teardown

    def postmaster_pid(self) -> int | None:
        """The running postmaster's pid (from postmaster.pid), if there is one."""
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None
        if not alive(pid):
            return None
        self.postmasters.add(pid)
        return pid


class PatroniCluster:
    """One etcd and `members` PostgreSQL members under Patroni, synchronous mode on."""

    def __init__(self, members: int = 2, root: Path | None = None) -> None:
        if not installed():
            raise RuntimeError("Patroni and etcd are not installed: run .ci/install-patroni.")
        self.bin_dir = system_bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="patroni-", dir=root))
        self.owner: pwd.struct_passwd | None = None
        if os.geteuid() == 0:
            self.owner = pwd.getpwnam(RUN_AS)
            os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
        self.etcd_port = free_port()
        self.etcd_peer_port = free_port()
        self.etcd: subprocess.Popen[bytes] | None = None
        self.members = {
            f"pg{n}": Member(
                name=f"pg{n}",
                port=free_port(),
                api_port=free_port(),
                data_dir=self.root / f"pg{n}" / "data",
                log=self.root / f"pg{n}.log",
                bouncer_port=free_port(),
            )
            for n in range(1, members + 1)
        }
        self.groups: set[int] = set()  # every process group started, for the teardown
        self.reaper = start_reaper(self.root)
        self.maintenance = False  # `patronictl pause`d (pause_replay)

    # --- starting and stopping ----------------------------------------------------

    def __enter__(self) -> PatroniCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> PatroniCluster:
        """etcd, then every member; back once a leader runs the coordinator's database
        and every replica streams from it (the synchronous standby among them)."""
        self.start_etcd()
        for member in self.members.values():
            self.start_member(member.name)
        leader = self.wait_for_leader(timeout=START_TIMEOUT)
        self.create_app_database(leader)
        for member in self.members.values():
            if member.name != leader:
                self.wait_for_replica(member.name, timeout=START_TIMEOUT)
        self.wait_for_sync_standby(timeout=START_TIMEOUT)
        return self

    def _spawn(self, args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
        """A process in a group of its own, as the postgres user when we are root."""
        user: dict[str, Any] = {}
        if self.owner is not None:
            user = {"user": self.owner.pw_uid, "group": self.owner.pw_gid, "extra_groups": []}
            env = {**env, "HOME": self.owner.pw_dir, "USER": RUN_AS, "LOGNAME": RUN_AS}
        with log.open("ab") as out:
            process = subprocess.Popen(
                args,
                cwd=self.root,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                **user,
            )
        self.groups.add(process.pid)
        return process

    def _chown(self, path: Path) -> None:
        if self.owner is not None:
            os.chown(path, self.owner.pw_uid, self.owner.pw_gid)

    def base_env(self) -> dict[str, str]:
        keep = ("PATH", "LANG", "LC_ALL", "TZ")
        return {k: v for k, v in os.environ.items() if k in keep}

    def start_etcd(self) -> None:
        data = self.root / "etcd"
        data.mkdir()
        self._chown(data)
        client = f"http://{LOOPBACK}:{self.etcd_port}"
        peer = f"http://{LOOPBACK}:{self.etcd_peer_port}"
        env = {
            **self.base_env(),
            **read_env_file(ETCD_ENV),
            "ETCD_NAME": "etcd1",
            "ETCD_DATA_DIR": str(data),
            "ETCD_LISTEN_CLIENT_URLS": client,
            "ETCD_ADVERTISE_CLIENT_URLS": client,
            "ETCD_LISTEN_PEER_URLS": peer,
            "ETCD_INITIAL_ADVERTISE_PEER_URLS": peer,
            "ETCD_INITIAL_CLUSTER": f"etcd1={peer}",
        }
        self.etcd = self._spawn([ETCD], env, self.root / "etcd.log")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.etcd.poll() is None, self.log("etcd.log")
            with suppress(OSError):
                with urllib.request.urlopen(client + "/health", timeout=2) as answer:
                    if json.loads(answer.read()).get("health") == "true":
                        return
            time.sleep(0.2)
        raise AssertionError("etcd did not come up:\n" + self.log("etcd.log"))

    def member_env(self, name: str) -> dict[str, str]:
        """What Patroni (and patronictl) read over patroni.yml for this member."""
        member = self.members[name]
        return {
            **self.base_env(),
            **PASSWORDS,
            "PATRONI_NAME": name,
            "PATRONI_RESTAPI_LISTEN": f"{LOOPBACK}:{member.api_port}",
            "PATRONI_RESTAPI_CONNECT_ADDRESS": f"{LOOPBACK}:{member.api_port}",
            "PATRONI_POSTGRESQL_LISTEN": f"{LOOPBACK}:{member.port}",
            "PATRONI_POSTGRESQL_CONNECT_ADDRESS": f"{LOOPBACK}:{member.port}",
            "PATRONI_POSTGRESQL_DATA_DIR": str(member.data_dir),
            "PATRONI_POSTGRESQL_BIN_DIR": str(self.bin_dir),
            "PATRONI_POSTGRESQL_PGPASS": str(self.root / f"{name}.pgpass"),
            "PATRONI_ETCD3_HOSTS": f"{LOOPBACK}:{self.etcd_port}",
        }

    def start_member(self, name: str) -> None:
        """Start (or start again) the member's Patroni; it starts its PostgreSQL."""
        member = self.members[name]
        assert member.process is None or member.process.poll() is not None, f"{name} runs"
        if not member.data_dir.parent.exists():
            member.data_dir.parent.mkdir()
            self._chown(member.data_dir.parent)
        env = {
            **self.member_env(name),
            "PGBOUNCER_PORT": str(member.bouncer_port),
            "PGBOUNCER_SOCKET_DIR": str(self.bouncer_dir(name)),
        }
        member.process = self._spawn([PATRONI, str(self.config_dir(name))], env, member.log)

    def config_dir(self, name: str) -> Path:
        """What Patroni reads (every .yml of a directory, merged in name order):
        deploy/patroni/patroni.yml itself (a link), then one override of two
        paths: the callback's (on a member /etc/patroni/pgbouncer-reconnect)
        and PostgreSQL's socket directory (Debian's /var/run/postgresql,
        which a user other than root or postgres may not write)."""
        folder = self.root / f"{name}-patroni"
        if not folder.exists():
            folder.mkdir()
            (folder / "patroni.yml").symlink_to(PATRONI_YML)
            callback = json.dumps(str(RECONNECT_CALLBACK))
            sockets = json.dumps(str(self.root))
            (folder / "zz-test-paths.yml").write_text(
                "postgresql:\n  callbacks:\n"
                f"    on_start: {callback}\n    on_role_change: {callback}\n"
                f"  parameters:\n    unix_socket_directories: {sockets}\n"
            )
            self._chown(folder)
        return folder

    def bouncer_dir(self, name: str) -> Path:
        return self.root / f"{name}-pgbouncer"

    def stop(self) -> None:
        """SIGKILL everything the cluster started, then remove its directory."""
        pids = {m.postmaster_pid() for m in self.members.values()}
        for member in self.members.values():
            pids |= member.postmasters
        for pid in pids - {None}:
            assert pid is not None
            kill_group_of(pid)
        for group in self.groups:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        for process in [self.etcd, *(m.process for m in self.members.values())]:
            if process is not None:
                with suppress(subprocess.TimeoutExpired):
                    process.wait(10)
        # Anything left running out of the root (a backend whose postmaster was
        # already gone is in the postmaster's group and went with it).
        for pid in processes_under(self.root):
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)
        if self.reaper.stdin is not None:
            self.reaper.stdin.close()  # nothing is left for it: it ends
        with suppress(subprocess.TimeoutExpired):
            self.reaper.wait(10)

    # --- faults -------------------------------------------------------------------

    def kill_member(self, name: str) -> None:
        """Lose the member whole, as a machine that dies: its Patroni and its
        PostgreSQL (postmaster and backends) SIGKILLed together. The leader key
        stays in etcd until its TTL runs out."""
        member = self.members[name]
        postmaster = member.postmaster_pid()
        assert member.process is not None
        os.killpg(member.process.pid, signal.SIGKILL)
        if postmaster is not None:
            kill_group_of(postmaster)
        member.process.wait(10)

    def kill_postmaster(self, name: str) -> int:
        """SIGKILL only the member's postmaster (its Patroni lives on, and acts); its pid."""
        postmaster = self.members[name].postmaster_pid()
        assert postmaster is not None, f"{name} runs no PostgreSQL"
        os.kill(postmaster, signal.SIGKILL)
        return postmaster

    def patronictl(self, *args: str, timeout: float = 60) -> str:
        """patronictl with the deployment's file, as an operator on a member runs it."""
        name = next(iter(self.members))
        result = subprocess.run(
            [PATRONICTL, "-c", str(PATRONI_YML), *args],
            env=self.member_env(name),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    def switchover(self, candidate: str | None = None) -> tuple[str, str]:
        """A planned switchover (`patronictl switchover`) from the leader to `candidate`
        (the synchronous standby by default); (old leader, new leader) once it leads."""
        leader = self.wait_for_leader()
        if candidate is None:
            candidate = self.wait_for_sync_standby()
        self.patronictl("switchover", "--leader", leader, "--candidate", candidate, "--force")
        self.wait_for_leader(timeout=60, other_than=leader)
        return leader, candidate

    # --- what the cluster looks like ----------------------------------------------

    def state(self) -> list[dict[str, Any]]:
        """Patroni's /cluster view (members with role, state and lag), from any member
        that answers; empty if none does."""
        for member in self.members.values():
            if member.process is None or member.process.poll() is not None:
                continue
            url = f"http://{LOOPBACK}:{member.api_port}/cluster"
            try:
                with urllib.request.urlopen(url, timeout=3) as answer:
                    members: list[dict[str, Any]] = json.loads(answer.read())["members"]
                    return members
            except (OSError, ValueError, KeyError):
                continue
        return []

    def leader(self) -> str | None:
        """The member that leads and runs (None during a failover)."""
        for entry in self.state():
            if entry.get("role") in ("leader", "master") and entry.get("state") == "running":
                if self.accepts_writes(entry["name"]):
                    return str(entry["name"])
        return None

    def replicas(self) -> list[str]:
        """Members streaming WAL from the leader (their WAL receiver says so)."""
        return [
            str(e["name"])
            for e in self.state()
            if e.get("role") in ("replica", "sync_standby") and self.streams(str(e["name"]))
        ]

    def sync_standby(self) -> str | None:
        """The synchronous standby, once it streams (the only member Patroni promotes)."""
        for entry in self.state():
            if entry.get("role") == "sync_standby" and self.streams(str(entry["name"])):
                return str(entry["name"])
        return None

    def streams(self, name: str) -> bool:
        try:
            with self.connect(name, connect_timeout=3) as conn:
                row = conn.execute("SELECT status FROM pg_stat_wal_receiver").fetchone()
        except psycopg.Error:
            return False
        return row is not None and row[0] == "streaming"

    def accepts_writes(self, name: str) -> bool:
        try:
            with self.connect(name, connect_timeout=3) as conn:
                row = conn.execute("SELECT pg_is_in_recovery()").fetchone()
        except psycopg.Error:
            return False
        return row is not None and row[0] is False

    def wait_for_leader(self, timeout: float = 60, other_than: str | None = None) -> str:
        """The leader's name, once one runs and takes writes (and is not `other_than`)."""
        return self._wait(
            f"a leader other than {other_than}" if other_than else "a leader",
            lambda: (lead := self.leader()) and lead != other_than and lead,
            timeout,
        )

    def wait_for_replica(self, name: str, timeout: float = 90) -> None:
        """Until the member streams from the leader (after a start, a rejoin, a rewind)."""
        self._wait(f"{name} streaming as a replica", lambda: name in self.replicas(), timeout)

    def wait_for_sync_standby(self, timeout: float = 60) -> str:
        return self._wait("a synchronous standby", self.sync_standby, timeout)

    def _wait(self, what: str, check: Any, timeout: float) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = check()
            if found:
                return found
            time.sleep(0.2)
        logs = "\n".join(f"== {m.name}\n{self.log(m.log.name)}" for m in self.members.values())
        raise AssertionError(f"timed out waiting for {what}: {self.state()}\n{logs}")

    def log(self, name: str) -> str:
        path = self.root / name
        return path.read_text(errors="replace")[-6000:] if path.exists() else ""

    # --- connecting ---------------------------------------------------------------

    def conninfo(
        self, name: str, *, superuser: bool = False, database: str = APP_DATABASE, **extra: Any
    ) -> dict[str, Any]:
        """psycopg connect kwargs for one member (the coordinator's role, or the superuser)."""
        user, password = SUPERUSER if superuser else APP_USER
        return {
            "host": LOOPBACK,
            "port": self.members[name].port,
            "user": user,
            "password": password,
            "dbname": database,
            **extra,
        }

    def connect(self, name: str, **extra: Any) -> psycopg.Connection[tuple[Any, ...]]:
        superuser = extra.pop("superuser", True)
        database = extra.pop("database", "postgres" if superuser else APP_DATABASE)
        info = self.conninfo(name, superuser=superuser, database=database, **extra)
        return psycopg.connect(**info, autocommit=True)

    def database_url(
        self, connect_timeout: int = 3, ports: list[int] | None = None, **options: str
    ) -> str:
        """The coordinator's DATABASE_URL: every member (or the `ports` in front of
        them), the one that takes writes chosen by libpq (`target_session_attrs=read-write`)."""
        ports = ports or [m.port for m in self.members.values()]
        hosts = ",".join(f"{LOOPBACK}:{port}" for port in ports)
        user, password = (quote(part, safe="") for part in APP_USER)
        query = {"target_session_attrs": "read-write", "connect_timeout": str(connect_timeout)}
        query.update(options)
        params = "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
        return f"postgres://{user}:{password}@{hosts}/{APP_DATABASE}?{params}"

    def primary_conninfo(self, connect_timeout: int = 3) -> dict[str, Any]:
        """psycopg connect kwargs that find the primary, as the DATABASE_URL does."""
        user, password = APP_USER
        return {
            "host": ",".join(LOOPBACK for _ in self.members),
            "port": ",".join(str(m.port) for m in self.members.values()),
            "user": user,
            "password": password,
            "dbname": APP_DATABASE,
            "target_session_attrs": "read-write",
            "connect_timeout": connect_timeout,
        }

    def replica_url(self, name: str) -> str:
        """A DATABASE_REPLICA_URL for one member."""
        user, password = (quote(part, safe="") for part in APP_USER)
        port = self.members[name].port
        return f"postgres://{user}:{password}@{LOOPBACK}:{port}/{APP_DATABASE}?connect_timeout=3"

    def start_pgbouncers(self) -> str:
        """A PgBouncer beside each member, from deploy/patroni/pgbouncer.ini and
        pgbouncer_hba.conf; the DATABASE_URL that lists them (libpq finds the
        primary through them). Patroni's callback (pgbouncer-reconnect) makes
        a member's PgBouncer reconnect when its role changes."""
        userlist = self.root / "userlist.txt"
        userlist.write_text('"{}" "{}"\n"{}" "{}"\n'.format(*APP_USER, *SUPERUSER))
        self._chown(userlist)
        for member in self.members.values():
            folder = self.bouncer_dir(member.name)
            folder.mkdir()
            self._chown(folder)
            ini = folder / "pgbouncer.ini"
            ini.write_text(
                pgbouncer_ini(
                    PGBOUNCER_INI.read_text(),
                    member.port,
                    {
                        "listen_addr": LOOPBACK,
                        "listen_port": str(member.bouncer_port),
                        "unix_socket_dir": str(folder),
                        "auth_file": str(userlist),
                        "auth_hba_file": str(PGBOUNCER_HBA),
                        "logfile": str(folder / "pgbouncer.log"),
                        "pidfile": str(folder / "pgbouncer.pid"),
                    },
                )
            )
            self._chown(ini)
            self._spawn([PGBOUNCER, str(ini)], self.base_env(), folder / "stdout.log")
        for member in self.members.values():
            self._wait(
                f"{member.name}'s PgBouncer",
                lambda port=member.bouncer_port: port_open(port),
                30,
            )
        return self.database_url(ports=[m.bouncer_port for m in self.members.values()])

    def create_app_database(self, leader: str) -> None:
        """The coordinator's role and database (docs/deploy.md: what the operator runs once)."""
        user, password = APP_USER
        with self.connect(leader) as conn:
            conn.execute(f"CREATE ROLE {user} LOGIN PASSWORD '{password}'")
            conn.execute(f"CREATE DATABASE {APP_DATABASE} OWNER {user}")

    # --- replication --------------------------------------------------------------

    def pause_replay(self, name: str) -> None:
        """Hold a replica behind: it still receives WAL (and acknowledges it, for the
        synchronous commit) but applies none of it until resumed.

        The cluster is put in maintenance mode first (`patronictl pause`): on
        PostgreSQL 14 and later, Patroni resumes a paused replay on its next loop
        (Postgresql.handle_parameter_change, within `loop_wait`), unless paused."""
        if not self.maintenance:
            self.patronictl("pause")
            self.maintenance = True
        with self.connect(name) as conn:
            conn.execute("SELECT pg_wal_replay_pause()")

    def resume_replay(self, name: str) -> None:
        with self.connect(name) as conn:
            conn.execute("SELECT pg_wal_replay_resume()")
        if self.maintenance:
            self.patronictl("resume")
            self.maintenance = False

    def replay_lag(self, name: str) -> tuple[int, float]:
        """How far a replica's applied state is behind what it received: (bytes, seconds
        since the last transaction it applied was committed; 0 when it is caught up)."""
        with self.connect(name) as conn:
            row = conn.execute(
                "SELECT pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()),"
                " CASE WHEN pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0"
                " ELSE extract(epoch FROM now() - pg_last_xact_replay_timestamp()) END"
            ).fetchone()
        assert row is not None
        return int(row[0] or 0), float(row[1] or 0)


def pgbouncer_ini(text: str, database_port: int, keys: dict[str, str]) -> str:
    """The shipped pgbouncer.ini with the keys that name a port or a path set to
    `keys`, and its database's PostgreSQL port set to `database_port`; the rest as it is."""
    lines = []
    for line in text.splitlines():
        key, equals, _ = line.partition("=")
        key = key.strip()
        if equals and key in keys:
            line = f"{key} = {keys[key]}"
        elif equals and key == APP_DATABASE:
            line = line.replace("port=5432", f"port={database_port}")
        lines.append(line)
    return "\n".join(lines) + "\n"


def port_open(port: int) -> bool:
    with suppress(OSError), socket.create_connection((LOOPBACK, port), timeout=1):
        return True
    return False


def alive(pid: int) -> bool:
    """Whether the process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def kill_group_of(pid: int) -> None:
    """SIGKILL the process's group (a postmaster's group holds its backends)."""
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(os.getpgid(pid), signal.SIGKILL)
    with suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


def processes_under(root: Path) -> list[int]:
    """Pids whose command line names a path under `root`, or whose working directory is
    under it (etcd's and Patroni's is the root itself, a postmaster's its data directory)."""
    found = []
    marker = str(root).encode()
    for entry in Path("/proc").iterdir():
        if not ascii_digits(entry.name) or int(entry.name) == os.getpid():
            continue
        with suppress(OSError):
            if marker in (entry / "cmdline").read_bytes() or Path(
                os.readlink(entry / "cwd")
            ).is_relative_to(root):
                found.append(int(entry.name))
    return found


# The reaper: blocks reading its stdin, a pipe whose other end only the test process
# holds; end of file means that process ended, stopped or not.
REAPER = """
import os, shutil, signal, sys, time
from pathlib import Path
from tests.support.patroni import processes_under
root = Path(os.environ["PATRONI_TEST_ROOT"])
sys.stdin.buffer.read()
for _ in range(3 if root.exists() else 0):  # stop() removes the root once all is stopped
    for pid in processes_under(root):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    time.sleep(0.5)
shutil.rmtree(root, ignore_errors=True)
"""


def start_reaper(root: Path) -> subprocess.Popen[bytes]:
    """A process that cleans up after the cluster under `root` once this one ends
    (in a session of its own, so a Ctrl-C to the test's group does not end it first;
    the root in its environment, so that processes_under does not find it)."""
    return subprocess.Popen(
        [sys.executable, "-c", REAPER],
        cwd=ROOT,
        env={**os.environ, "PATRONI_TEST_ROOT": str(root)},
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.fixture(scope="module")
def patroni_cluster() -> Iterator[PatroniCluster]:
    """Two members under Patroni and one etcd for the module, stopped after it.

    Import it into a test module or conftest.py:

        from tests.support.patroni import patroni_cluster  # noqa: F401

    Missing Patroni or etcd fails the test with the install hint (never a skip).
    """
    if not installed():
        pytest.fail("Patroni and etcd are not installed: run .ci/install-patroni as root.")
    with PatroniCluster(members=2) as cluster:
        yield cluster
