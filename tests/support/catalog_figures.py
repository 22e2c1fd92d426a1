"""The catalog's figures as the console shows them (dashboard, status, /metrics), and
the same figures counted straight from the tables, to compare them.

Plain functions over text and rows, so the console tests (Django's test client)
and the end-to-end test (gunicorn over HTTP, psycopg) share them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from html import unescape
from typing import Any

# The direct COUNT/SUM over the tables: the whole catalog, and per group.
COUNT_SQL = (
    "SELECT count(*), count(*) FILTER (WHERE complete), coalesce(sum(segments), 0),"
    " coalesce(sum(bytes), 0), coalesce(sum(conflicts), 0),"
    " extract(epoch FROM max(date))::bigint FROM catalog_file"
)
COUNT_BY_GROUP_SQL = (
    "SELECT g.name, count(f.id) FILTER (WHERE f.complete), count(f.id) FROM news_group AS g"
    " LEFT JOIN catalog_file AS f ON f.group_id = g.id GROUP BY g.name"
)


@dataclass(frozen=True)
class Figures:
    files: int
    complete: int
    segments: int
    bytes: int
    conflicts: int
    newest: int | None  # Unix time


def counted(row: tuple[Any, ...]) -> Figures:
    """Figures from a row of COUNT_SQL."""
    return Figures(*(int(v) for v in row[:5]), newest=None if row[5] is None else int(row[5]))


def counted_by_group(rows: list[tuple[Any, ...]]) -> dict[str, tuple[int, int]]:
    """{group: (complete, files)} from the rows of COUNT_BY_GROUP_SQL."""
    return {name: (int(complete), int(files)) for name, complete, files in rows}


_TOTAL = re.compile(
    r'<td class="num" data-total="(\w+)" data-value="([^"]*)"[^>]*>(.*?)</td>', re.S
)
_GROUP = re.compile(r'<tr class="group" data-group="([^"]+)">(.*?)</tr>', re.S)
_GROUP_FILES = re.compile(
    r'<a href="([^"]+)" data-complete="(\d+)" data-files="(\d+)">([\d,]+) / ([\d,]+)</a>'
)


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html)).strip()


def from_dashboard(html: str) -> Figures:
    """The catalog totals the dashboard shows (checking the shown text says the same)."""
    values: dict[str, int | None] = {}
    for name, value, cell in _TOTAL.findall(html):
        if name == "newest":
            values[name] = int(value) if value else None
            shown = _text(cell)
            assert shown == "-" if not value else shown.endswith(" UTC"), cell
        else:
            values[name] = int(value)
            assert _text(cell) == f"{int(value):,}", cell
    return Figures(**values)  # type: ignore[arg-type]


def groups_from_dashboard(html: str) -> dict[str, tuple[int, int, str]]:
    """{group: (complete, files, link to its files in the admin)} from the groups table."""
    out = {}
    for name, row in _GROUP.findall(html):
        found = _GROUP_FILES.search(row)
        assert found is not None, row
        link, complete, files, shown_complete, shown_files = found.groups()
        assert (shown_complete, shown_files) == (f"{int(complete):,}", f"{int(files):,}")
        out[unescape(name)] = (int(complete), int(files), unescape(link))
    return out


def from_status(status: dict[str, Any]) -> Figures:
    catalog = status["catalog"]
    newest = catalog["newest"]
    return Figures(
        *(int(catalog[k]) for k in ("files", "complete", "segments", "bytes", "conflicts")),
        newest=None if newest is None else int(datetime.fromisoformat(newest).timestamp()),
    )


def _sample(text: str, name: str) -> float | None:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def from_metrics(text: str) -> Figures:
    def gauge(name: str) -> int:
        value = _sample(text, name)
        assert value is not None, f"{name} not in /metrics"
        return int(value)

    newest = _sample(text, "seed_catalog_newest_post_timestamp_seconds")
    return Figures(
        files=gauge("seed_catalog_files"),
        complete=gauge("seed_catalog_complete_files"),
        segments=gauge("seed_catalog_segments"),
        bytes=gauge("seed_catalog_bytes"),
        conflicts=gauge("seed_catalog_conflicts"),
        newest=None if newest is None else int(newest),
    )
