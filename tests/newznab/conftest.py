"""Fixtures of the newznab tests: an API key and a strict reader of the answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from newznab import services


@dataclass
class Issued:
    id: int
    key: str


@pytest.fixture
def api_key(db: Any) -> Issued:
    api_key, key = services.issue_api_key("sonarr")
    return Issued(api_key.pk, key)


@pytest.fixture(autouse=True)
def _fresh_term_stats() -> Any:
    """Word frequencies are cached per process; each test reads its own."""
    from newznab.selectors import forget_term_stats

    forget_term_stats()
    yield
    forget_term_stats()
