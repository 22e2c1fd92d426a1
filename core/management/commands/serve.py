"""`manage.py serve`: migrate, ensure an admin login, then run gunicorn.

Migration and the admin login run under a PostgreSQL advisory lock, so
several hosts may start together (core/startup.py). `--no-migrate` leaves
both to a separate `manage.py migrate` step (docs/several-hosts.md).

With SECRET_KEY unset, the settings made a random key on first start and
keep it in var/secret-key (coordinator/local_secrets.py); serve says where.

The process execs gunicorn in place, so with the embedded database the
server stays up for exactly as long as the coordinator runs.
"""

from __future__ import annotations

import os
import resource
import shutil
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.admin_login import admin_login_message
from core.client_address import ENVIRON_KEY
from core.startup import connection_budget_problem, prepare_database


def prepare_metrics_dir() -> None:
    """Counters of several workers go to PROMETHEUS_MULTIPROC_DIR (var/prometheus
    unless set); it is emptied first, since files of dead processes would add up."""
    path = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or settings.VAR_DIR / "prometheus")
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)


# The first field is the client's address as the limits key it (behind a trusted
# proxy, the forwarded one: core/client_address.py), not the connection's peer.
ACCESS_LOG_FORMAT = (
    f'%({{{ENVIRON_KEY}}}e)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(a)s"'
)


# A worker's connections (gunicorn's default, said here so the open-file budget can
# be checked): a connection being read, answered, kept alive or closing counts.
WORKER_CONNECTIONS = 1000
FILES_PER_THREAD = 2  # its database session and a file it serves
FILES_RESERVED = 64  # the listener, the poller, the logs, the heartbeat file, ...


def open_files_needed(threads: int) -> int:
    """The open files one worker of `threads` threads may hold at most."""
    return WORKER_CONNECTIONS + FILES_PER_THREAD * threads + FILES_RESERVED


def open_files_problem(threads: int) -> str | None:
    """A sentence when the process's open-file limit is under what a worker may need
    (a worker that runs out stops accepting for a moment; its clients wait)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = open_files_needed(threads)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return None
    return (
        f"Warning: the open-file limit is {soft}, under the {needed} a worker may need "
        f"({WORKER_CONNECTIONS} connections, {FILES_PER_THREAD} files for each of "
        f"{threads} threads, {FILES_RESERVED} more); past it a worker stops accepting "
        "for a moment. Raise it: LimitNOFILE= in the systemd unit "
        "(deploy/systemd/seed-coordinator.service sets 4096), or `ulimit -n`."
    )


class Command(BaseCommand):
    help = "Migrate, make sure an admin login exists, and serve the coordinator with gunicorn."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=settings.BIND)
        parser.add_argument("--workers", type=int, default=settings.WEB_WORKERS)
        parser.add_argument("--threads", type=int, default=settings.WEB_THREADS)
        parser.add_argument(
            "--timeout",
            type=int,
            default=settings.WEB_TIMEOUT,
            help="seconds before a worker whose main loop hangs is restarted (not a request limit)",
        )
        parser.add_argument(
            "--no-connection-check",
            action="store_true",
            help="start even if workers x threads may open more sessions than PostgreSQL "
            "allows (e.g. behind a pooler that has its own limit)",
        )
        parser.add_argument(
            "--no-migrate",
            action="store_true",
            help="serve without migrating or creating the admin login "
            "(a separate `manage.py migrate` step handles the schema)",
        )

    def handle(
        self,
        *args: Any,
        bind: str,
        workers: int,
        threads: int,
        timeout: int,
        no_migrate: bool,
        no_connection_check: bool = False,
        **options: Any,
    ) -> None:
        if not no_connection_check:
            problem = connection_budget_problem(workers, threads)
            if problem is not None:
                raise CommandError(problem)
        if not no_migrate:
            self.prepare_database()
        call_command("collectstatic", interactive=False, verbosity=0)
        gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or shutil.which(
            "gunicorn"
        )
        if gunicorn is None:
            raise CommandError("gunicorn is not installed: run `make install`.")
        prepare_metrics_dir()
        problem = open_files_problem(threads)
        if problem is not None:
            self.stderr.write(problem)
        if settings.SECRET_KEY_FILE is not None:
            self.stdout.write(
                f"Sessions are signed with the key kept in {settings.SECRET_KEY_FILE}."
            )
        self.stdout.write(
            f"Serving on http://{bind}/ (admin at /admin/, API docs at /api/v1/docs/)"
        )
        self.stdout.flush()
        os.execv(  # noqa: S606 (replaces this process with gunicorn)
            gunicorn, gunicorn_arguments(gunicorn, bind, workers, threads, timeout)
        )

    def prepare_database(self) -> None:
        prepared = prepare_database()
        if prepared.migrations_applied:
            self.stdout.write(f"Applied {prepared.migrations_applied} migration(s).")
        else:
            self.stdout.write("The schema is up to date.")
        self.stdout.write(admin_login_message(prepared.admin, prepared.admin_created))


def gunicorn_arguments(
    gunicorn: str, bind: str, workers: int, threads: int, timeout: int
) -> list[str]:
    """gthread workers: a long stream (a snapshot of up to 8 GiB, a relayed overview)
    holds a thread while the worker's main loop keeps telling the arbiter it is
    alive, so `timeout` never cuts a slow transfer (sync workers were killed).
    Their main loop reads each small request whole before a thread takes it, so
    slow clients hold no threads (core/gunicorn_worker.py)."""
    return [
        gunicorn,
        "coordinator.wsgi",
        "--bind",
        bind,
        "--worker-class",
        "core.gunicorn_worker.BufferingWorker",  # gthread: buffers, times the queue
        "--workers",
        str(workers),
        "--threads",
        str(threads),
        "--worker-connections",
        str(WORKER_CONNECTIONS),
        "--timeout",
        str(timeout),
        "--graceful-timeout",
        str(settings.WEB_GRACEFUL_TIMEOUT),
        "--keep-alive",
        str(settings.WEB_KEEPALIVE),
        "--access-logfile",
        "-",
        # The path without its query string: a newznab key travels as
        # ?apikey= and must never reach a log.
        "--access-logformat",
        ACCESS_LOG_FORMAT,
    ]
