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
from django.db.models import F, Q

from catalog.sql import queries
from core.counts import COUNT_CAP, capped_count
from core.errors import NotFound
from core.replicas import PRIMARY
from indexer.models import Group
from usenet.categories import CATEGORIES

from .identity import release_stem
from .models import CatalogFile, Release
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


def file_ids_by_message_id(message_id: str, *, using: str = PRIMARY) -> list[int]:
    """Every catalog file holding this message-id (one per group it was posted to)."""
    rows = queries.fetchall("files_by_message_id", {"message_id": message_id}, using=using)
    return [row.id for row in rows]


def file_page(
    *,
    group: str | None = None,
    complete: bool | None = None,
    q: str | None = None,
    since: int | None = None,
    message_id: str | None = None,
    page: int = 1,
    page_size: int | None = None,
    after: int | None = None,
    using: str = PRIMARY,
) -> FilePage:
    """A page of files, newest first (id descending: stable while files are added).

    `count` is exact up to COUNT_CAP and capped beyond (`count_capped`), so a
    list over millions of files never waits on a full count. `after` (the
    last id seen) walks by keyset: any depth costs one index probe, where a
    page number costs the rows before it.
    """
    size = page_size or settings.CATALOG_PAGE_SIZE
    files = CatalogFile.objects.using(using)  # the replica's, where lag is tolerated
    if group is not None:
        named = Group.objects.using(using).filter(name=group)
        group_id = named.values_list("id", flat=True).first()
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
        files = files.filter(id__in=file_ids_by_message_id(message_id, using=using))
    if after is not None:
        files = files.filter(id__lt=after)
    count = capped_count(files)
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


# --- releases -----------------------------------------------------------------

RELEASE_FIELDS = (
    "id", "name", "poster", "posted", "size", "files_expected", "files_seen",
    "segments_present", "segments_expected", "has_par2", "has_nfo", "category", "groups",
    "posted_name", "passworded", "encrypted", "imdb_id", "tvdb_id",
)  # fmt: skip
RELEASE_FILES_SHOWN = 1000
NZB_CHUNK = 50


@dataclass(frozen=True)
class ReleasePage:
    results: list[dict[str, Any]]
    # (posted as Unix microseconds, id) of the last result when there is a next page.
    next_after: tuple[int, int] | None


def release_summary(row: dict[str, Any]) -> dict[str, Any]:
    """The API's shape of a release (dates as Unix time, completion in percent)."""
    expected = row["segments_expected"]
    completion = 100 * row["segments_present"] / expected if expected else 0.0
    return {
        **{name: row[name] for name in RELEASE_FIELDS if name != "posted"},
        "posted": int(row["posted"].timestamp()),
        "completion": round(min(completion, 100.0), 2),
        "category_name": CATEGORIES.get(row["category"], ""),
    }


MAX_CATEGORY = 99_999  # a newznab id a client names here: five digits at most


def category_filter(categories: Sequence[int]) -> Q:
    """Releases of these newznab ids; a parent id (2000) includes its children (2000-2999)."""
    where = Q()
    for cat in categories:
        if cat % 1000 == 0:
            where |= Q(category__gte=cat, category__lt=cat + 1000)
        else:
            where |= Q(category=cat)
    return where


def release_page(
    *,
    q: str | None = None,
    category: Sequence[int] = (),
    group: str | None = None,
    min_completion: float | None = None,
    since: int | None = None,
    after: tuple[int, int] | None = None,
    limit: int | None = None,
    using: str = PRIMARY,
) -> ReleasePage:
    """A page of releases, newest posted first, by keyset (`after`: the last one seen).

    No count and no offset: a page costs the same on page 1 and page 10,000
    (the (posted, id) index, or (category, posted, id) with a category).
    """
    size = limit or settings.CATALOG_PAGE_SIZE
    releases = Release.objects.using(using)  # the replica's, where lag is tolerated
    if q:
        releases = releases.filter(name__icontains=q)
    if category:
        releases = releases.filter(category_filter(category))
    if group:
        releases = releases.filter(groups__contains=[group])
    if min_completion is not None:
        releases = releases.filter(
            segments_present__gte=F("segments_expected") * min_completion / 100
        )
    if since is not None:
        releases = releases.filter(posted__gte=datetime.fromtimestamp(since, tz=UTC))
    if after is not None:
        posted = datetime.fromtimestamp(after[0] / 1_000_000, tz=UTC)
        releases = releases.filter(Q(posted__lt=posted) | Q(posted=posted, id__lt=after[1]))
    rows = list(releases.order_by("-posted", "-id").values(*RELEASE_FIELDS)[: size + 1])
    last = rows[size - 1] if len(rows) > size else None
    return ReleasePage(
        results=[release_summary(row) for row in rows[:size]],
        next_after=None if last is None else (_microseconds(last["posted"]), last["id"]),
    )


def _microseconds(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def release_files(release_id: int) -> list[dict[str, Any]]:
    """A release's files (no segment arrays), in file-counter order, with their completion."""
    files = (
        CatalogFile.objects.filter(release_id=release_id)
        .order_by("file_index", "name", "group__name", "id")
        .values(*LIST_FIELDS, "file_index")[:RELEASE_FILES_SHOWN]
    )
    return [{**summary(row), "file_index": row["file_index"]} for row in files]


def release_detail(release_id: int) -> dict[str, Any]:
    row = Release.objects.filter(id=release_id).values(*RELEASE_FIELDS).first()
    if row is None:
        raise NotFound(f"Release {release_id} does not exist.")
    return {**release_summary(row), "files": release_files(release_id)}


def _nzb_file(copies: list[CatalogFile]) -> NzbFile:
    """One file of a release as the NZB names it: its copies in every group, parts merged."""
    segments: dict[int, tuple[int, str, int]] = {}
    for copy in copies:
        for part, message_id, size in zip(copy.parts, copy.message_ids, copy.sizes, strict=True):
            segments.setdefault(part, (part, message_id, size))
    first = copies[0]
    return NzbFile(
        subject=first.subject,
        poster=first.poster,
        date=int(min(c.date for c in copies).timestamp()),
        groups=sorted({c.group.name for c in copies}),
        segments=[segments[part] for part in sorted(segments)],
    )


def _release_nzb_files(file_ids: list[int]) -> Iterator[NzbFile]:
    """The release's files, NZB_CHUNK at a time; a cross-posted file's copies become one."""
    pending: list[CatalogFile] = []
    for start in range(0, len(file_ids), NZB_CHUNK):
        chunk = files_with_segments(file_ids[start : start + NZB_CHUNK])
        chunk.sort(key=lambda f: file_ids.index(f.id))
        for item in chunk:
            if pending and (item.subject, item.poster) != (pending[0].subject, pending[0].poster):
                yield _nzb_file(pending)
                pending = []
            pending.append(item)
    if pending:
        yield _nzb_file(pending)


def release_nzb_stream(release_id: int) -> tuple[Iterator[bytes], str]:
    """A release's NZB as a stream of chunks (files read NZB_CHUNK at a time), and its name
    (the real one once inspection found it, with the real file names in its <head>)."""
    row = Release.objects.filter(id=release_id).values_list("name", "real_names").first()
    if row is None:
        raise NotFound(f"Release {release_id} does not exist.")
    name, real_names = row
    file_ids = list(
        CatalogFile.objects.filter(release_id=release_id)
        .order_by("file_index", "subject", "poster", "id")
        .values_list("id", flat=True)
    )
    return nzb_chunks(_release_nzb_files(file_ids), title=name, real_names=real_names), name


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
