"""Django's PostgreSQL backend, with a health check that costs no round trip.

Django checks a kept connection before a request's first query
(CONN_HEALTH_CHECKS) with a `SELECT 1`: a round trip on every request, as
many statements again as a node's ping makes (docs/performance.md, "The
coordinator's cost per call"). A connection idle between requests receives
nothing from the server unless the server ends it: a shutdown, a crash, a
terminated backend or a failover send their FATAL message or close the
socket, and either makes the socket readable. So an idle connection whose
socket has nothing to read is usable as it is; one with anything to read (or
not idle, or broken) gets Django's `SELECT 1`, which reads it and drops the
connection if it ended. What neither check sees (a host gone without a word)
fails the request's first query as before: core/database_faults.py answers it.
"""

from __future__ import annotations

import select

from django.db.backends.postgresql import base
from psycopg import pq

_ANY_EVENT = select.POLLIN | select.POLLPRI | select.POLLERR | select.POLLHUP


def has_input(fd: int) -> bool:
    """Whether the socket `fd` has something to read, an error or a hang-up, now."""
    poller = select.poll()
    poller.register(fd, _ANY_EVENT)
    return bool(poller.poll(0))


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        conn = self.connection
        if conn is None or conn.broken or conn.closed:
            return False
        quiet = (
            conn.pgconn.status == pq.ConnStatus.OK
            and conn.info.transaction_status == pq.TransactionStatus.IDLE
            and not has_input(conn.pgconn.socket)
        )
        return quiet or bool(super().is_usable())
