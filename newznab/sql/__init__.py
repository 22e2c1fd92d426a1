"""The newznab app's registry of named SQL blocks (docs/architecture.md, "Conventions")."""

from __future__ import annotations

from pathlib import Path

from core.sql import Queries

queries = Queries(Path(__file__).parent)
