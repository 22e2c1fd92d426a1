"""Named SQL blocks loaded once from an app's `sql/*.sql` files and called by name.

Each app has one registry, `<app>/sql/__init__.py: queries`, over its files;
rows come back as named records (`row.next_id`). This package holds the
machinery and the core's own queries. The rules: docs/architecture.md,
"Conventions".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import psycopg
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from psycopg.rows import dict_row, namedtuple_row

T = TypeVar("T")


class Record(Protocol):
    """A row of a query: its columns as attributes, named as the SELECT names them.

    psycopg's namedtuple rows (the class is made once per column list and
    cached), so reading a row costs what a tuple does.
    """

    def __getattr__(self, name: str) -> Any: ...


# PostgreSQL takes at most 65,535 parameters in one statement (and Django's
# `__in=` sends one per value); lists that may be longer go in slices.
PARAMETER_BATCH = 10_000


def slices(items: Sequence[T], size: int = PARAMETER_BATCH) -> Iterator[Sequence[T]]:
    """`items` in consecutive slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]


_NAME = re.compile(r"^--\s*name:\s*(\w+)\s*$", re.MULTILINE)


def parse_queries(text: str) -> dict[str, str]:
    parts = _NAME.split(text)
    queries: dict[str, str] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in queries:
            raise ValueError(f"query {name!r} is defined twice")
        queries[name] = body.strip()
    return queries


# An app's sql/schema.sql holds the live definition of its functions, views
# and triggers: read by the schema-drift test, never called by name.
SCHEMA_FILE = "schema.sql"


@cache
def load_queries(path: str) -> dict[str, str]:
    """The named blocks of one `.sql` file, or of every `.sql` file below a directory
    (the schema file aside)."""
    where = Path(path)
    if where.is_dir():
        files = sorted(file for file in where.rglob("*.sql") if file.name != SCHEMA_FILE)
    else:
        files = [where]
    queries: dict[str, str] = {}
    for file in files:
        for name, body in parse_queries(file.read_text(encoding="utf-8")).items():
            if name in queries:
                raise ValueError(f"query {name!r} is defined twice in {where}")
            queries[name] = body
    return queries


# A literal %% first, so "%%(x)s" (a percent sign, then text) is left alone.
_PLACEHOLDER = re.compile(r"%%|%\((\w+)\)s")


def binary_placeholders(query: str) -> str:
    """`query` with every `%(param)s` placeholder turned into `%(param)b`."""
    return _PLACEHOLDER.sub(lambda m: m[0] if m[1] is None else f"%({m[1]})b", query)


@cache
def _binary_query(path: str, name: str) -> str:
    return binary_placeholders(load_queries(path)[name])


class _UnpreparedCursor(psycopg.Cursor[Any]):
    """A cursor whose statements are never prepared (see Queries.fetchall_planned)."""

    def execute(
        self,
        query: Any,
        params: Any = None,
        *,
        prepare: bool | None = None,
        binary: bool | None = None,
    ) -> Any:
        return super().execute(query, params, prepare=False, binary=binary)


class Queries:
    """The named queries of one `.sql` file, or of a directory of them."""

    def __init__(self, path: Path) -> None:
        self._path = str(path)

    def __getitem__(self, name: str) -> str:
        return load_queries(self._path)[name]

    def fetchone(
        self, name: str, params: Mapping[str, Any], *, using: str = DEFAULT_DB_ALIAS
    ) -> Record | None:
        with connections[using].cursor() as cursor:
            cursor.cursor.row_factory = namedtuple_row
            cursor.execute(self[name], params)
            return cursor.fetchone()  # type: ignore[no-any-return]

    def fetchall(
        self, name: str, params: Mapping[str, Any], *, using: str = DEFAULT_DB_ALIAS
    ) -> list[Record]:
        with connections[using].cursor() as cursor:
            cursor.cursor.row_factory = namedtuple_row
            cursor.execute(self[name], params)
            return cursor.fetchall()  # type: ignore[no-any-return]

    def fetchall_planned(
        self,
        name: str,
        params: Mapping[str, Any],
        row_factory: Any = namedtuple_row,
        *,
        using: str = DEFAULT_DB_ALIAS,
    ) -> list[Any]:
        """Like fetchall, but planned for these values every time, never prepared.

        psycopg prepares a statement run twice, and PostgreSQL may then keep
        one generic plan for every value. A search's best plan depends on
        its values (a word in half the rows or in ten), so it is planned
        each time (a millisecond) rather than fixed by a guess. Same
        connection and transaction; Django still counts and logs the query.
        """
        connection = connections[using]
        connection.ensure_connection()
        raw = _UnpreparedCursor(connection.connection, row_factory=row_factory)
        wrapper = CursorDebugWrapper if connection.queries_logged else CursorWrapper
        with wrapper(raw, connection) as cursor:
            cursor.execute(self[name], params)
            return cursor.fetchall()  # type: ignore[no-any-return]

    def fetchdicts_planned(
        self, name: str, params: Mapping[str, Any], *, using: str = DEFAULT_DB_ALIAS
    ) -> list[dict[str, Any]]:
        """fetchall_planned's rows as dicts."""
        return self.fetchall_planned(name, params, row_factory=dict_row, using=using)

    def fetchdicts(
        self, name: str, params: Mapping[str, Any], *, using: str = DEFAULT_DB_ALIAS
    ) -> list[dict[str, Any]]:
        with connections[using].cursor() as cursor:
            cursor.cursor.row_factory = dict_row
            cursor.execute(self[name], params)
            return cursor.fetchall()  # type: ignore[no-any-return]

    def binary(self, name: str) -> str:
        """The query with every `%(param)s` placeholder turned into `%(param)b`."""
        return _binary_query(self._path, name)

    def fetchone_bound(self, name: str, params: Mapping[str, Any]) -> Record | None:
        """Like fetchone, with the parameters sent to the server in binary.

        A `%s` placeholder lets psycopg send a list as an array literal in
        text: every element quoted (bytes hex-escaped) on the client and
        parsed again on the server. A batch merge sends tens of thousands of
        elements; in binary that costs a tenth (docs/performance.md, "Catalog:
        storing batches"). Same connection and transaction, and Django still
        counts and logs the query. The query's own casts (`::int[]`) fix the
        types, so a list psycopg sends as int2[] or all NULLs still fits.
        """
        rows = self.fetchall_bound(name, params)
        return rows[0] if rows else None

    def fetchall_bound(self, name: str, params: Mapping[str, Any]) -> list[Record]:
        """Like fetchall, with the parameters sent in binary (see fetchone_bound)."""
        connection = connections[DEFAULT_DB_ALIAS]
        connection.ensure_connection()
        raw = psycopg.Cursor(connection.connection, row_factory=namedtuple_row)
        raw.format = psycopg.pq.Format.BINARY
        wrapper = CursorDebugWrapper if connection.queries_logged else CursorWrapper
        with wrapper(raw, connection) as cursor:
            cursor.execute(self.binary(name), params)
            return cursor.fetchall()  # type: ignore[no-any-return]

    def execute(self, name: str, params: Mapping[str, Any]) -> int:
        """Run a statement and return its row count (on the primary: it may write)."""
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            cursor.execute(self[name], params)
            return cursor.rowcount

    def copy_rows(self, name: str, rows: Iterable[Sequence[Any]]) -> int:
        """Stream rows into a `COPY ... FROM STDIN` statement; returns how many were sent."""
        count = 0
        with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
            with cursor.cursor.copy(self[name]) as copy:
                for row in rows:
                    copy.write_row(row)
                    count += 1
        return count


# The core's registry: the embedded server, startup, throttle, the clock (sql/*.sql here).
queries = Queries(Path(__file__).parent)
