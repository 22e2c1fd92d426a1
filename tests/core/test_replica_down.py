"""A read replica that does not answer costs one request its connect timeout, not all.

While one thread of a process measures the replica (core/replicas.py), the
others take the last state, or the primary before the first measure: a replica
hung or behind a dropped route (the connection accepted, nothing answered, as a
black-holed address waits out its SYNs) must not hold every search and list that
arrives meanwhile for DB_CONNECT_TIMEOUT.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import suppress

import pytest
from django.db import connections

from coordinator.environment import database_config
from core import replicas
from core.replicas import REPLICA
from tests.support.net import LOOPBACK


@pytest.fixture(scope="module")
def silent_replica(django_db_setup: None) -> Iterator[list[socket.socket]]:
    """DATABASE_REPLICA_URL pointing at a server that accepts and never answers (a
    replica hung or behind a dropped route): a connection waits out connect_timeout.
    The connections it accepted, for the test to count."""
    accepted: list[socket.socket] = []
    listener = socket.create_server((LOOPBACK, 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with suppress(TimeoutError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    url = f"postgres://u:p@{LOOPBACK}:{listener.getsockname()[1]}/db?connect_timeout=2"
    config = connections.configure_settings({"default": database_config(url, "REPLICA")})
    config["default"]["TEST"] = {"MIRROR": "default"}  # not flushed after the test
    connections.settings[REPLICA] = config["default"]
    try:
        yield accepted
    finally:
        stop.set()
        thread.join(5)
        for held in accepted:
            held.close()
        listener.close()
        connections[REPLICA].close()
        del connections[REPLICA]  # this thread's wrapper, on the settings above
        del connections.settings[REPLICA]
        replicas.forget_measures()


@pytest.mark.django_db(transaction=True, databases=["default", REPLICA])
def test_a_replica_that_does_not_answer_is_waited_on_by_one_request_not_all(
    silent_replica: list[socket.socket],
) -> None:
    replicas.forget_measures()
    threads = 4
    start = threading.Barrier(threads)
    chosen: list[str] = []

    def request() -> None:
        start.wait()
        try:
            chosen.append(replicas.reader())
        finally:
            connections.close_all()

    workers = [threading.Thread(target=request) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert chosen == [replicas.PRIMARY] * threads
    # One thread measured (and waited out the connect timeout); the others read the
    # primary meanwhile instead of each opening a connection and waiting as long.
    assert len(silent_replica) == 1
    assert not replicas.replica_state().reachable
