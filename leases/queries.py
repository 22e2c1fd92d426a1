"""The leases app's named SQL (`sql/lanes.sql`), loaded once."""

from __future__ import annotations

from pathlib import Path

from indexer.sql import Queries

lanes_sql = Queries(Path(__file__).parent / "sql" / "lanes.sql")
