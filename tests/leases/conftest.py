"""Fixtures for group leases: lane calls over HTTP and time moved in the database."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from tests.support.s3 import s3_endpoint  # noqa: F401  (a fixture: the object-storage tests')


@pytest.fixture
def backdate_lane() -> Callable[..., None]:
    """Move a lane's heartbeat into the past, in the database (no sleeping)."""

    def move(group_id: int, lane: str, seconds: int) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE group_lane SET heartbeat_at = now() - make_interval(secs => %s)"
                " WHERE group_id = %s AND lane = %s",
                [seconds, group_id, lane],
            )

    return move


@pytest.fixture
def snapshot_dir(settings: Any, tmp_path: Any) -> Any:
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    return settings.SNAPSHOT_DIR
