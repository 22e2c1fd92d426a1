"""pytest fixtures for tests that need a real INN2 news server.

Import them into a conftest.py:

    from tests.support.fixtures import inn_reader, inn_server  # noqa: F401

A missing inn2 install fails the test with the install hint instead of skipping it: a
skipped integration suite looks green while testing nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.inn2 import InnNotInstalled, InnServer, NntpClient, check_installed


@pytest.fixture(scope="session")
def inn_server() -> Iterator[InnServer]:
    """One running private INN instance for the session; it starts with no groups.

    Tests create their own groups (`inn_server.create_group`) under names of their
    own, so they can share the server without seeing each other's articles.
    """
    try:
        check_installed()
    except InnNotInstalled as exc:
        pytest.fail(str(exc), pytrace=False)
    with InnServer() as server:
        yield server


@pytest.fixture
def inn_reader(inn_server: InnServer) -> Iterator[NntpClient]:
    """A fresh reader connection to the session's nnrpd, closed after the test."""
    with inn_server.reader() as client:
        yield client
