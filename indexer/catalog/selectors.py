"""Reads of the catalog: file lists, one file, message-id lookups, NZB documents.

Lists never read the segment arrays (the columns beside them say how many
segments and bytes a file has); only a single file and its NZB do.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.db.models import F

from indexer.admin_tools import COUNT_CAP
from indexer.errors import NotFound
from indexer.models import Group
from indexer.sql import queries

from .identity import release_stem
from .models import CatalogFile
from .nzb import NzbFile, nzb_chunks

LIST_FIELDS = (
    "id", "group__name", "name", "subject", "poster", "date", "total", "segments", "bytes",
    "complete",
)  # fmt: skip
SEGMENT_FIELDS = ("parts", "articles", "sizes", "message_ids", "conflict_ids")
RELEASE_LIMIT = 1000


@dataclass(frozen=True)
class FilePage:
    count: int
    count_capped: bool
    has_next: bool
    results: list[dict[str, Any]]


def summary(row: dict[str, Any]) -> dict[str, Any]:
    """The API's shape of a file (dates as Unix time)."""
    return {
        "id": row["id"],
        "group": row["group__name"],
        "name": row["name"],
        "subject": row["subject"],
        "poster": row["poster"],
        "date": int(row["date"].timestamp()),
        "total": row["total"],
        "segments": row["segments"],
        "bytes": row["bytes"],
        "complete": row["complete"],
    }


def file_ids_by_message_id(message_id: str) -> list[int]:
    """Every catalog file holding this message-id (one per group it was posted to)."""
    return [row.id for row in queries.fetchall("files_by_message_id", {"message_id": message_id})]


def file_page(
    *,
    group: str | None = None,
    complete: bool | None = None,
    q: str | None = None,
    since: int | None = None,
    message_id: str | None = None,
    page: int = 1,
    page_size: int | None = None,
) -> FilePage:
    """A page of files, newest first (id descending: stable while files are added).

    `count` is exact up to COUNT_CAP and capped beyond (`count_capped`), so a
    list over millions of files never waits on a full count.
    """
    size = page_size or settings.CATALOG_PAGE_SIZE
    files = CatalogFile.objects.all()
    if group is not None:
        group_id = Group.objects.filter(name=group).values_list("id", flat=True).first()
        if group_id is None:
            raise NotFound(f"group: there is no group named {group!r}.")
        files = files.filter(group_id=group_id)
    if complete is not None:
        files = files.filter(complete=complete)
    if q:
        files = files.filter(name__icontains=q)  # upper(name) LIKE: the trigram index
    if since is not None:
        files = files.filter(date__gte=datetime.fromtimestamp(since, tz=UTC))
    if message_id:
        files = files.filter(id__in=file_ids_by_message_id(message_id))
    count = files.order_by()[: COUNT_CAP + 1].count()
    offset = (page - 1) * size
    rows = list(files.order_by("-id").values(*LIST_FIELDS)[offset : offset + size + 1])
    return FilePage(
        count=min(count, COUNT_CAP),
        count_capped=count > COUNT_CAP,
        has_next=len(rows) > size,
        results=[summary(row) for row in rows[:size]],
    )


def file_detail(file_id: int) -> dict[str, Any]:
    row = (
        CatalogFile.objects.filter(id=file_id)
        .values(*LIST_FIELDS, "file_index", "file_count", "conflicts", "rule_version")
        .first()
    )
    if row is None:
        raise NotFound(f"File {file_id} does not exist.")
    return {
        **summary(row),
        "file_index": row["file_index"],
        "file_count": row["file_count"],
        "conflicts": row["conflicts"],
        "rule_version": row["rule_version"],
    }


def files_with_segments(file_ids: Sequence[int]) -> list[CatalogFile]:
    return list(CatalogFile.objects.filter(id__in=list(file_ids)).select_related("group"))


# Files whose segments are read at once while an NZB streams.
NZB_SLICE = 50


def release_file_ids(file_id: int) -> list[int]:
    """The files of the post `file_id` belongs to (itself alone when it has no file counter)."""
    ids = [
        row.id
        for row in queries.fetchall(
            "release_file_ids", {"file_id": file_id, "limit": RELEASE_LIMIT}
        )
    ]
    return ids or [file_id]


def nzb_for(file_ids: Sequence[int], title: str | None = None) -> tuple[Iterator[bytes], str]:
    """An NZB of these files, streamed, in file-counter then name order, and a name for it.

    The order and the name are read first (no segments), so NotFound, when none
    of them exist, is raised before anything is sent; the segments are then
    read NZB_SLICE files at a time while the document streams.
    """
    rows = list(
        CatalogFile.objects.filter(id__in=list(file_ids))
        .order_by(F("file_index").asc(nulls_last=True), "name", "id")
        .values_list("id", "name")
    )
    if not rows:
        raise NotFound(f"File {file_ids[0] if file_ids else '?'} does not exist.")
    ordered = [file_id for file_id, _name in rows]
    return nzb_chunks(_nzb_files(ordered), title=title), title or rows[0][1]


def _nzb_files(ordered: list[int]) -> Iterator[NzbFile]:
    for offset in range(0, len(ordered), NZB_SLICE):
        wanted = ordered[offset : offset + NZB_SLICE]
        by_id = {f.id: f for f in files_with_segments(wanted)}
        for file_id in wanted:
            f = by_id.get(file_id)
            if f is None:  # deleted while the document streamed
                continue
            yield NzbFile(
                subject=f.subject,
                poster=f.poster,
                date=int(f.date.timestamp()),
                groups=[f.group.name],
                segments=list(zip(f.parts, f.message_ids, f.sizes, strict=True)),
            )


def file_nzb(file_id: int) -> tuple[Iterator[bytes], str]:
    return nzb_for([file_id])


def release_nzb(file_id: int) -> tuple[Iterator[bytes], str]:
    """One NZB of every file of the post `file_id` belongs to."""
    name = CatalogFile.objects.filter(id=file_id).values_list("name", flat=True).first()
    if name is None:
        raise NotFound(f"File {file_id} does not exist.")
    return nzb_for(release_file_ids(file_id), title=release_stem(name))


# --- totals -------------------------------------------------------------------


@dataclass(frozen=True)
class CatalogTotals:
    """Files, complete files, segments, bytes, conflicts and the newest post date.

    Exact and current: read from group_catalog_summary, which the triggers on
    catalog_file keep in the writers' own transactions (docs/catalog.md,
    "Totals"), so no read counts the files.
    """

    files: int = 0
    complete: int = 0
    segments: int = 0
    bytes: int = 0
    conflicts: int = 0
    newest: datetime | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CatalogTotals:
        counts = {f.name: int(row[f.name] or 0) for f in fields(cls) if f.name != "newest"}
        return cls(**counts, newest=row["newest"])

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (the status report): the newest post date in ISO 8601, or null."""
        return {**asdict(self), "newest": self.newest.isoformat() if self.newest else None}


def catalog_totals() -> CatalogTotals:
    """The whole catalog's totals (one query over the summary)."""
    return CatalogTotals.from_row(queries.fetchdicts("catalog_totals", {})[0])


def catalog_totals_by_group(group_ids: Sequence[int]) -> dict[int, CatalogTotals]:
    """Totals of these groups; a group without files is absent (read it as zeros)."""
    if not group_ids:
        return {}
    rows = queries.fetchdicts("catalog_totals_by_group", {"group_ids": list(group_ids)})
    return {int(row["group_id"]): CatalogTotals.from_row(row) for row in rows}
