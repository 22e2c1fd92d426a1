"""The node agent's tests: a scripted coordinator, a token file, the shared INN fixtures."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.fixtures import inn_reader, inn_server  # noqa: F401
from tests.support.scripted import ScriptedCoordinator


@pytest.fixture
def coordinator() -> Iterator[ScriptedCoordinator]:
    """A coordinator that answers as each test scripts it (tests/support/scripted.py)."""
    running = ScriptedCoordinator()
    yield running
    running.close()


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    """A token file the agent reads (the scripted coordinator takes any token)."""
    path = tmp_path / "token"
    path.write_text("sn_test-token\n")
    return path


@pytest.fixture(autouse=True)
def collector_thresholds() -> Iterator[None]:
    """The agent sets its process's collector thresholds (collect_less_often): a test
    that runs it in this process leaves them as they were."""
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)
