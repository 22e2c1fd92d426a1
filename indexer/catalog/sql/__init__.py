"""The catalog's named queries (catalog.sql); each has one typed wrapper."""

from __future__ import annotations

from pathlib import Path

from indexer.sql import Queries

catalog_sql = Queries(Path(__file__).parent / "catalog.sql")
