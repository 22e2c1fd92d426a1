"""`manage.py serve`: migrate, ensure an admin login, then run gunicorn.

Migration and the admin login run under a PostgreSQL advisory lock, so
several hosts may start together (indexer/startup.py). `--no-migrate` leaves
both to a separate `manage.py migrate` step (docs/several-hosts.md).

With SECRET_KEY unset, the settings made a random key on first start and
keep it in var/secret-key (coordinator/local_secrets.py); serve says where.

The process execs gunicorn in place, so with the embedded database the
server stays up for exactly as long as the coordinator runs.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from indexer.startup import prepare_database


def prepare_metrics_dir() -> None:
    """Counters of several workers go to PROMETHEUS_MULTIPROC_DIR (var/prometheus
    unless set); it is emptied first, since files of dead processes would add up."""
    path = Path(os.environ.get("PROMETHEUS_MULTIPROC_DIR") or settings.VAR_DIR / "prometheus")
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)


class Command(BaseCommand):
    help = "Migrate, make sure an admin login exists, and serve the coordinator with gunicorn."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--bind", default=os.environ.get("BIND", "127.0.0.1:8000"))
        parser.add_argument("--workers", type=int, default=int(os.environ.get("WEB_WORKERS", "3")))
        parser.add_argument(
            "--timeout", type=int, default=120, help="gunicorn worker timeout, seconds"
        )
        parser.add_argument(
            "--no-migrate",
            action="store_true",
            help="serve without migrating or creating the admin login "
            "(a separate `manage.py migrate` step handles the schema)",
        )

    def handle(
        self, *args: Any, bind: str, workers: int, timeout: int, no_migrate: bool, **options: Any
    ) -> None:
        if not no_migrate:
            self.prepare_database()
        call_command("collectstatic", interactive=False, verbosity=0)
        gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable)) or shutil.which(
            "gunicorn"
        )
        if gunicorn is None:
            raise CommandError("gunicorn is not installed: run `make install`.")
        prepare_metrics_dir()
        if settings.SECRET_KEY_FILE is not None:
            self.stdout.write(
                f"Sessions are signed with the key kept in {settings.SECRET_KEY_FILE}."
            )
        self.stdout.write(
            f"Serving on http://{bind}/ (admin at /admin/, API docs at /api/v1/docs/)"
        )
        self.stdout.flush()
        os.execv(  # noqa: S606 (replaces this process with gunicorn)
            gunicorn,
            [
                gunicorn,
                "coordinator.wsgi",
                "--bind",
                bind,
                "--workers",
                str(workers),
                "--timeout",
                str(timeout),
                "--access-logfile",
                "-",
            ],
        )

    def prepare_database(self) -> None:
        prepared = prepare_database()
        if prepared.migrations_applied:
            self.stdout.write(f"Applied {prepared.migrations_applied} migration(s).")
        else:
            self.stdout.write("The schema is up to date.")
        if prepared.admin_password:
            self.stdout.write(
                f"Admin login created: user {prepared.admin_created!r}, "
                f"password {prepared.admin_password!r} (also in var/admin-password)"
            )
