"""A worker that runs out of open files stops accepting for a moment instead of dying.

`serve` runs under an open-file limit of 128 (systemd's default is 1,024, which
one worker's 1,000 connections plus its threads' sessions pass: the unit now
sets LimitNOFILE). Six hundred connections that never finish their head are
more than the 3 workers can hold open under it, so accept() fails with EMFILE
in some worker on any machine. That once raised out of the worker's main loop
and killed it with every request it held; now the worker pauses accepting
(the connections wait in the listen backlog), says so in the log, and goes on:
no worker dies, and once the connections close /healthz answers.
"""

from __future__ import annotations

import resource
import socket
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from tests.deploy.test_held_bodies import Served
from tests.support.fleet import fresh_database

pytestmark = pytest.mark.e2e

OPEN_FILES = 128  # the server's limit
CONNECTIONS = 600  # more than 3 workers x 128 files

_soft, HARD = resource.getrlimit(resource.RLIMIT_NOFILE)


@pytest.fixture(scope="module")
def served_with_few_files(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    workdir = tmp_path_factory.mktemp("open-files")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with fresh_database() as (url, conninfo):
        server = Served(url, conninfo, workdir)
        resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, hard))
        try:
            server.start()  # serve, and gunicorn after it, inherit the limit
        finally:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        try:
            yield server
        finally:
            server.stop()


@pytest.mark.skipif(
    HARD != resource.RLIM_INFINITY and HARD < CONNECTIONS + 200,
    reason=f"the test's own connections need {CONNECTIONS + 200} open files",
)
def test_a_worker_out_of_files_goes_on_serving(served_with_few_files: Served) -> None:
    served = served_with_few_files
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, CONNECTIONS + 200), hard))
    try:
        with ExitStack() as stack:
            for _ in range(CONNECTIONS):
                client = stack.enter_context(
                    socket.create_connection(("127.0.0.1", served.port), 10)
                )
                client.sendall(b"POST /admin/login/ HTTP/1.1\r\n")  # a head that never ends
            time.sleep(5)  # every worker has accepted what it could
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    time.sleep(2)  # the workers see the connections close and accept again
    with urllib.request.urlopen(served.url + "/healthz", timeout=30) as answer:
        assert answer.status == 200
    log = served.whole_log()
    assert "cannot accept a connection (Too many open files)" in log, log[-6000:]
    assert "Exception in worker process" not in log, log[-6000:]
    assert log.count("Booting worker") == 3, log[-6000:]  # none died and was replaced
    assert "open-file limit is 128" in log  # serve said so at start
