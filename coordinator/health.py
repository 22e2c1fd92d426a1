"""/healthz and /readyz for load balancers and systemd, answered before anything else.

Both are unauthenticated, answered by the first middleware (no host check, session,
CSRF or request log) so a probe by IP address over plain HTTP works and costs little:
/healthz touches nothing; /readyz runs one query (the applied migrations, a small
table) and compares with the migrations on disk, read once per process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache

from django.db import DatabaseError, ProgrammingError
from django.db.migrations.loader import MigrationLoader
from django.db.migrations.recorder import MigrationRecorder
from django.http import HttpRequest, HttpResponse

PROBES = {"/healthz", "/readyz"}


@cache
def migrations_on_disk() -> frozenset[tuple[str, str]]:
    return frozenset(MigrationLoader(None, ignore_no_migrations=True).graph.nodes)


def readiness(expected: frozenset[tuple[str, str]] | None = None) -> tuple[int, dict[str, object]]:
    """(status, body): 200 when the database answers and every migration is applied."""
    try:
        applied = set(MigrationRecorder.Migration.objects.values_list("app", "name"))
    except ProgrammingError:
        applied = set()  # no django_migrations table yet: a new database
    except DatabaseError as exc:
        # The error's text can name hosts and users: its class is enough for a probe.
        return 503, {"status": "unavailable", "database": f"not answering ({type(exc).__name__})"}
    pending = sorted((expected or migrations_on_disk()) - applied)
    if pending:
        names = [f"{app}.{name}" for app, name in pending]
        return 503, {"status": "unavailable", "pending_migrations": names}
    return 200, {"status": "ready"}


def probe_response(status: int, body: dict[str, object]) -> HttpResponse:
    response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    response["Cache-Control"] = "no-store"
    return response


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path not in PROBES or request.method not in ("GET", "HEAD"):
            return self.get_response(request)
        if request.path == "/healthz":
            return probe_response(200, {"status": "alive"})
        return probe_response(*readiness())
