"""A read that tolerates lag falls back to the primary only when the replica failed it.

A search reads on the replica, and a few things on the primary meanwhile (the
terms' statistics, newznab/selectors.py). When the primary goes away under it (a
failover), the error is the primary's: the replica must not be set aside for
REPLICA_RETRY_SECONDS, nor the read run again on the primary that just failed;
the caller answers its 503 (core/replicas.py, read_tolerating_lag).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import DatabaseError, connections

from core import replicas
from core.database_faults import database_unavailable
from core.replicas import PRIMARY, REPLICA
from core.sql import queries
from tests.support.sessions import side_session

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", REPLICA])


@pytest.fixture(scope="module", autouse=True)
def replica_alias(django_db_setup: None) -> Iterator[None]:
    """A `replica` alias on the test database itself (a server not in recovery has
    replayed all it wrote: no lag), declared after the test databases are made."""
    config = dict(connections["default"].settings_dict)
    config["TEST"] = {"MIRROR": "default"}  # not flushed after the test
    connections.settings[REPLICA] = config
    replicas.forget_measures()
    try:
        yield
    finally:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]
        replicas.forget_measures()


def test_the_primary_failing_under_a_replica_read_is_the_primarys_error_not_the_replicas() -> None:
    assert replicas.replica_state().serving
    connections[PRIMARY].ensure_connection()
    pid = connections[PRIMARY].connection.info.backend_pid
    ran_on: list[str] = []

    def read(using: str) -> str:
        ran_on.append(using)
        if using == REPLICA:
            queries.fetchone("database_clock", {}, using=REPLICA)  # the replica answers
            with side_session() as killer:  # the primary goes away meanwhile
                killer.execute("SELECT pg_terminate_backend(%s)", [pid])
            queries.fetchone("database_clock", {}, using=PRIMARY)
        return using

    try:
        with pytest.raises(DatabaseError) as failed:
            replicas.read_tolerating_lag(read)
    finally:
        connections[PRIMARY].close()  # the next request connects again
    assert database_unavailable(failed.value)
    assert ran_on == [REPLICA]  # not read again on the primary that just failed
    state = replicas.replica_state()
    assert state.reachable and state.serving, state
