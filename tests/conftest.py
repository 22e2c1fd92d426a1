"""Shared fixtures: an API client per node, helpers that move time in the database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection
from hypothesis import settings

from tests.support.factories import NodeFactory
from tests.support.nodes import NodeClient

# No property test has a wall-clock deadline (hypothesis's default is 200 ms an
# example): a deadline is a timed assertion, and on a loaded machine one slow
# example (a pause of the collector, a busy core) failed a test whose every
# example was right. Speed is measured in bench/, linearity by CPU cost.
settings.register_profile("project", deadline=None)
settings.load_profile("project")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--soak",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="run the fault suite's faults (tests/chaos) at random for MINUTES (off by default)",
    )


@pytest.fixture
def node_client() -> Callable[..., NodeClient]:
    def make(**kwargs: Any) -> NodeClient:
        return NodeClient(NodeFactory(**kwargs))

    return make


@pytest.fixture
def backdate() -> Callable[..., None]:
    """Move a range's heartbeat into the past, in the database (no sleeping)."""

    def move(range_id: int, seconds: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE seed_range SET heartbeat_at = now() - make_interval(secs => %s) WHERE id = %s",
                [seconds, range_id],
            )

    return move


@pytest.fixture(autouse=True)
def _fresh_process_caches() -> Any:
    """Each test sees its own rule sets and sizes (the caches outlive transactions)."""
    from catalog.rulesets import forget_current_rules
    from indexer.space import forget_cached_sizes

    forget_current_rules()
    forget_cached_sizes()
    yield
    forget_current_rules()
    forget_cached_sizes()


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings: Any) -> None:
    """admin_client creates a user per test; the real hasher is slow on purpose."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# The suites that run servers, browsers or the network are slow as a whole:
# `-m "not slow"` (make test-quick) is then one expression for the fast loop.
SLOW_SUITES = ("e2e", "chaos", "browser", "inn", "registry")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW_SUITES):
            item.add_marker(pytest.mark.slow)
