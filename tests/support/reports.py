"""Building reported files (FileReport and their JSON form) for catalog tests: a file,
a release's set of files (`release_files`), storing them (`store`), the NZB DTD."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lxml import etree

from catalog.models import CatalogFile
from catalog.services import store_files
from catalog.validation import FileReport

POSTER = "someone <a@b.c>"


def subject(name: str, total: int, part: int = 1, index: int = 1, count: int = 12) -> str:
    return f'[{index:02d}/{count:02d}] - "{name}" yEnc ({part}/{total})'


def msgid(name: str, part: int, host: str = "host") -> str:
    return f"<{name}.{part}@{host}>"


def report(
    name: str = "name.part01.rar",
    parts: Any = (1, 2),
    total: int = 2,
    *,
    poster: str = POSTER,
    date: int = 1_700_000_000,
    index: int = 1,
    count: int = 12,
    host: str = "host",
    size: int = 700_000,
    article: int = 1000,
) -> FileReport:
    parts = list(parts)
    return FileReport(
        subject=subject(name, total, parts[0], index, count),
        poster=poster,
        date=date,
        total=total,
        segments=[(p, article + p, msgid(name, p, host), size + p) for p in parts],
    )


def as_json(item: FileReport) -> dict[str, Any]:
    return {
        "subject": item.subject,
        "poster": item.poster,
        "date": item.date,
        "total": item.total,
        "segments": [list(seg) for seg in item.segments],
    }


SNAPSHOT_FIELDS = (
    "group_id", "key", "release_key", "subject", "poster", "name", "file_index", "file_count",
    "total", "date", "parts", "articles", "sizes", "message_ids", "conflict_ids", "segments",
    "bytes", "complete", "conflicts",
)  # fmt: skip


def catalog_snapshot() -> list[tuple[Any, ...]]:
    """Everything a catalog file says, in key order (ids and times left out)."""
    rows = CatalogFile.objects.order_by("group_id", "key").values_list(*SNAPSHOT_FIELDS)
    return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in rows]


DTD = etree.DTD(str(Path(__file__).with_name("nzb-1.1.dtd")))


def store(group, *reports):
    return store_files(group.id, None, list(reports), [])


STEM = "Some.Show.S01E02.1080p.WEB.h264-GRP"


def release_files(stem: str = STEM, count: int = 5, date: int = 1_700_000_000, **kw):
    """A rar set of count-2 volumes, a par2 and an nfo, two segments each (1/2, 2/2)."""
    names = [f"{stem}.part{i:02d}.rar" for i in range(1, count - 1)]
    names += [f"{stem}.vol00+01.par2", f"{stem}.nfo"]
    return [
        report(name, parts=[1, 2], total=2, index=i, count=count, date=date + i, **kw)
        for i, name in enumerate(names, start=1)
    ]
