"""The replica's lag as core/replicas.py measures it: the age of the oldest write it misses."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core import replicas


@pytest.fixture(autouse=True)
def fresh(settings: Any) -> Iterator[None]:
    settings.REPLICA_MAX_LAG_SECONDS = 30
    settings.REPLICA_CHECK_SECONDS = 1
    replicas.forget_measures()
    yield
    replicas.forget_measures()


def test_an_idle_primary_with_a_replica_that_has_everything_is_no_lag() -> None:
    # Nothing written for an hour: the replica has replayed all there is.
    for second in range(0, 3600, 60):
        assert replicas._lag_seconds(float(second), 5_000, 5_000) == 0


def test_a_replica_held_behind_lags_by_the_time_since_the_primary_passed_it() -> None:
    assert replicas._lag_seconds(100.0, 5_000, 5_000) == 0
    assert replicas._lag_seconds(101.0, 6_000, 5_000) == 1.0  # a write it has not replayed
    assert replicas._lag_seconds(140.0, 9_000, 5_000) == 40.0  # still stuck: past the bound
    assert replicas._lag_seconds(141.0, 9_000, 9_000) == 0  # caught up


def test_a_replica_behind_every_sample_of_a_new_process_is_not_trusted_until_it_can_tell() -> None:
    assert replicas._lag_seconds(0.0, 6_000, 5_000) is None
    assert replicas._lag_seconds(10.0, 7_000, 5_000) is None  # behind for 10 s at least
    assert replicas._lag_seconds(31.0, 8_000, 5_000) == 31.0  # at least 31 s: past the bound
    assert replicas._lag_seconds(32.0, 8_000, 6_500) == 32.0  # has what the primary had at 0 s


def test_without_a_replica_url_every_read_is_the_primarys() -> None:
    state = replicas.replica_state()
    assert not state.configured and not state.serving
    assert replicas.read_tolerating_lag(lambda using: using) == replicas.PRIMARY
