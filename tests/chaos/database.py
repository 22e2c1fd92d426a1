"""A PostgreSQL cluster of the fault run's own, which the test stops and starts again.

The session's test server is shared with the pytest process, so the fault
run's coordinator gets a throwaway cluster of the machine's PostgreSQL
(tests/support/system_postgres.py): `pg_ctl stop -m fast` ends every session
(the coordinator's persistent connections among them) and removes the socket,
`pg_ctl start` brings the same data directory back on the same socket.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psycopg

from tests.support.system_postgres import SystemPostgres

DATABASE = "chaos_fleet"


class RestartablePostgres(SystemPostgres):
    def __enter__(self) -> RestartablePostgres:
        self.start()
        return self

    def pg_ctl(self, *args: str) -> None:
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), *args)

    def stop_fast(self) -> None:
        self.pg_ctl("-m", "fast", "-w", "stop")

    def start_again(self) -> None:
        options = f"-c listen_addresses='' -k {self.root} -c fsync=off"
        self.pg_ctl("-o", options, "-l", str(self.root / "log"), "-w", "start")

    @contextmanager
    def database(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """The fleet's database on this cluster: (DATABASE_URL, psycopg connect kwargs)."""
        info: dict[str, Any] = dict(self.conninfo())
        with psycopg.connect(**info, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
        yield self.url(DATABASE), self.conninfo(DATABASE)


@dataclass
class Outage:
    """When the database went down and came back (time.time()), once it has."""

    stopped: float = 0.0
    started: float = 0.0
    batches_before: int = 0  # batch commits acknowledged before the stop
    errors: list[str] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


@contextmanager
def outage(
    cluster: RestartablePostgres,
    ready: Callable[[], bool],
    acknowledged: Callable[[], int],
    down_seconds: float = 10.0,
    deadline: float = 90.0,
) -> Iterator[Outage]:
    """Once `ready()`, stop the cluster (fast) for `down_seconds`, then start it again.

    Runs in a thread beside the block; on the way out the cluster is up again
    whatever happened (so the run's outcome can be read).
    """
    record = Outage()

    def run() -> None:
        try:
            limit = time.monotonic() + deadline
            while not ready() and time.monotonic() < limit:
                time.sleep(0.2)
            record.batches_before = acknowledged()
            record.stopped = time.time()
            cluster.stop_fast()
            time.sleep(down_seconds)
            cluster.start_again()
            record.started = time.time()
        except Exception as exc:
            record.errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            record.done.set()

    thread = threading.Thread(target=run, name="postgres-outage", daemon=True)
    thread.start()
    try:
        yield record
    finally:
        thread.join(deadline + down_seconds + 30)
        if record.stopped and not record.started:
            cluster.start_again()
