"""Errors that mean "the database is switching": a failover, a restart, a lost connection.

During a failover a request in flight sees one of a few failures: the server
went away (no SQLSTATE: libpq's "server closed the connection unexpectedly",
"connection refused"), the connection broke (class 08), the server was shut
down under it (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot
connect now: still starting), or the session landed on a server that is now
a standby (25006: "cannot execute ... in a read-only transaction"). They are
told apart here by SQLSTATE, never by message text, so each edge answers them
the same way: the node API a 503 with Retry-After (core/api/errors.py), the
newznab API its error 900 with 503, the admin the page "the database is
switching" (`DatabaseSwitchingMiddleware`), a `manage.py` command one sentence
and exit code 75 (coordinator/cli.py). And the connection is dropped, never
kept: one on a demoted primary still answers `SELECT 1`, so the health check
alone would keep it until DB_CONN_MAX_AGE.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
from django.core.signals import got_request_exception
from django.db import DatabaseError, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5  # Patroni promotes a standby in a few seconds (docs/reliability.md)
# sysexits.h's EX_TEMPFAIL: "a temporary failure; the user is invited to retry".
EXIT_TEMPFAIL = 75
# The SQLSTATEs of a server going away or turning read-only (class 08 as a whole).
SWITCHING_STATES = {
    "57P01": "the server was shut down",
    "57P02": "the server crashed",
    "57P03": "the server is starting or stopping",
    "25006": "the server is read-only (a standby)",
}
CONNECTION_CLASS = "08"
API_PREFIX = "/api/"  # the node API answers JSON of its own (core/api/middleware.py)
DISCONNECTED = (OperationalError, InterfaceError, psycopg.OperationalError, psycopg.InterfaceError)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and the errors it wraps (Django's database errors wrap psycopg's)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def sqlstate(exc: BaseException) -> str | None:
    """The SQLSTATE of `exc` or of the psycopg error it wraps; None for libpq's own failures."""
    for error in _chain(exc):
        if isinstance(error, psycopg.Error) and error.sqlstate:
            return error.sqlstate
    return None


def database_unavailable(exc: BaseException) -> bool:
    """Whether `exc` is the database going away or switching, rather than a query's fault."""
    state = sqlstate(exc)
    if state is not None:
        return (
            state.startswith(CONNECTION_CLASS)
            or state in SWITCHING_STATES
            or (
                isinstance(exc, DISCONNECTED)  # 53300 too many connections, 57014 cancelled, ...
            )
        )
    return any(isinstance(error, DISCONNECTED) for error in _chain(exc))


def reason(exc: BaseException) -> str:
    """What happened, in a few words with the SQLSTATE; never libpq's text (it lists hosts)."""
    state = sqlstate(exc)
    if state is None:
        return "no connection"
    if state in SWITCHING_STATES:
        return f"{SWITCHING_STATES[state]}, SQLSTATE {state}"
    if state.startswith(CONNECTION_CLASS):
        return f"the connection broke, SQLSTATE {state}"
    return f"SQLSTATE {state}"


def discard_connections() -> None:
    """Close every open database connection that no atomic block holds, so the next
    use connects again (to the new primary: libpq's target_session_attrs picks it)."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is None or connection.in_atomic_block:
            continue
        try:
            connection.close()
        except DatabaseError:  # closing a broken connection may fail; it is gone either way
            connection.connection = None


def if_unavailable(exc: BaseException) -> bool:
    """database_unavailable(exc); if so, the connections are discarded and a line logged."""
    if not database_unavailable(exc):
        return False
    logger.warning("database unavailable (%s): connections closed", reason(exc))
    discard_connections()
    return True


# --- the admin and every other HTML page -------------------------------------------


def _remember_fault(sender: Any, request: HttpRequest | None = None, **kwargs: Any) -> None:
    # Sent while Django turns an exception into its 500 page: sys.exc_info() holds it.
    exc = sys.exc_info()[1]
    if request is not None and exc is not None and database_unavailable(exc):
        request._database_fault = exc  # type: ignore[attr-defined]


got_request_exception.connect(_remember_fault, dispatch_uid="core.database_faults")


def switching_page(exc: BaseException) -> HttpResponse:
    body = render_to_string(
        "database_switching.html", {"reason": reason(exc), "retry_after": RETRY_AFTER_SECONDS}
    )
    response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseSwitchingMiddleware:
    """A page that failed because the database is switching says so: HTTP 503, Retry-After,
    "retry in a few seconds", instead of the 500 page. The node API's own JSON answer
    (core/api) and the newznab API's error document (newznab/api.py) come first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        fault = getattr(request, "_database_fault", None)
        if (
            response.status_code == 500
            and fault is not None
            and not request.path.startswith(API_PREFIX)
        ):
            if_unavailable(fault)
            return switching_page(fault)
        return response
