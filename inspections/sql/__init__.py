"""The inspections app's named SQL: every `.sql` file in this directory, loaded once."""

from __future__ import annotations

from pathlib import Path

from core.sql import Queries

queries = Queries(Path(__file__).parent)
