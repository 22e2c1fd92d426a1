"""The fault suite's posts on the session's INN2 and the reference run; `--soak` is in tests/conftest.py."""

from __future__ import annotations

import pytest

from tests.chaos import harness
from tests.chaos.harness import Outcome
from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.inn2 import InnServer


@pytest.fixture(scope="session")
def posted(inn_server: InnServer) -> InnServer:  # noqa: F811
    """INN2 with the suite's posts (one set for the session: every run reads the same)."""
    harness.post_articles(inn_server)
    return inn_server


@pytest.fixture(scope="session")
def reference(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> Outcome:
    """An undisturbed run of the posts, every fault run is compared with."""
    return harness.run_fleet(posted, tmp_path_factory.mktemp("reference"), {}, troublemaker=False)
