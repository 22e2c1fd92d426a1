"""Which releases are inspected, and which of their articles a node reads (issue 26).

`needs_inspection` decides per INSPECT_RELEASES; `choose_articles` picks,
from a release's files:

- par2: the first segment of its index file (the smallest `.par2`);
- nfo: the segments of the smallest `.nfo`, in part order from part 1, up to
  INSPECT_NFO_MAX_BYTES and `inspection.MAX_NFO_SEGMENTS` (at least its first);
- archive: the first segment of the first volume (`x.part01.rar`, `x.rar`
  before its `.r00`, `x.7z` or `x.7z.001`, `x.zip`); for an obfuscated
  release whose files have no extension at all, the largest file's first.

`plan_step` reads the next releases in id order from the plan mark and
inserts a row for each that needs one (idempotent: one row per release),
then refreshes the articles of queued rows whose release changed since. The
periodic upkeep runs it (tasks.py), and `manage.py plan_inspections`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction

from core.sql import Record
from inspection import MAX_NFO_SEGMENTS
from usenet.numbers import ascii_digits
from usenet.obfuscation import is_obfuscated

from .sql import queries

MODES = ("obfuscated", "other", "all", "off")
OTHER_CATEGORIES = range(8000, 9000)  # newznab's Other and its subcategories
PLAN_BATCH = 2000  # releases read per step
REFRESH_BATCH = 2000  # queued rows whose release changed, refreshed per step

ARCHIVE_ORDER = ("rar", "7z", "zip")


def mode() -> str:
    return str(settings.INSPECT_RELEASES)


def needs_inspection(name: str, category: int, how: str | None = None) -> bool:
    """Whether a release with this name and category is inspected under INSPECT_RELEASES."""
    how = mode() if how is None else how
    if how == "all":
        return True
    if how == "off":
        return False
    if how == "other" and category in OTHER_CATEGORIES:
        return True
    return is_obfuscated(name)


@dataclass(frozen=True)
class FileRow:
    """What the choice reads of one catalog file (sql: release_files)."""

    group_id: int
    name: str
    bytes: int
    first_id: str | None
    first_size: int | None
    segments: tuple[tuple[int, str, int], ...] = ()  # (part, message-id, bytes): nfo only


def _extension(name: str) -> str:
    head, dot, tail = name.rpartition(".")
    return tail.lower() if dot and head and 1 <= len(tail) <= 5 and tail.isalnum() else ""


def _first_volume_rank(name: str) -> int | None:
    """0 rar, 1 7z, 2 zip for a first volume; None for anything else."""
    lower = name.lower()
    extension = _extension(lower)
    if extension == "rar":
        stem = lower[: -len(".rar")]
        _, dot, part = stem.rpartition(".")
        if dot and part.startswith("part") and len(part) > 4:
            number = part[4:]
            if not ascii_digits(number):
                return 0  # "x.partly.rar": not a volume number
            return 0 if number.lstrip("0") == "1" else None
        return 0
    if extension in ("7z", "zip"):
        return ARCHIVE_ORDER.index(extension)
    if extension == "001":
        inner = _extension(lower[: -len(".001")])
        if inner in ("7z", "zip"):
            return ARCHIVE_ORDER.index(inner)
    return None


def choose_articles(
    files: Sequence[FileRow], obfuscated: bool, nfo_max: int
) -> tuple[list[dict[str, Any]], int | None]:
    """The articles to read and the group to read them in (None: no file to read yet)."""
    readable = [f for f in files if f.first_id]
    articles: list[dict[str, Any]] = []
    group: int | None = None

    def add(role: str, file: FileRow, message_ids: list[str], size: int) -> None:
        nonlocal group
        articles.append(
            {"role": role, "message_ids": message_ids, "bytes": size, "name": file.name}
        )
        group = file.group_id if group is None else group

    par2 = [f for f in readable if _extension(f.name) == "par2"]
    if par2:
        index = min(par2, key=lambda f: (f.bytes, f.name))
        add("par2", index, [str(index.first_id)], int(index.first_size or 0))
    nfos = [f for f in files if _extension(f.name) == "nfo" and f.segments]
    if nfos:
        nfo = min(nfos, key=lambda f: (f.bytes, f.name))
        ids, size = _nfo_segments(nfo.segments, nfo_max)
        if ids:
            add("nfo", nfo, ids, size)
    volumes = [(rank, f) for f in readable if (rank := _first_volume_rank(f.name)) is not None]
    if volumes:
        _, first = min(volumes, key=lambda pair: (pair[0], pair[1].name))
        add("archive", first, [str(first.first_id)], int(first.first_size or 0))
    elif obfuscated and readable and not any(_extension(f.name) for f in files):
        largest = max(readable, key=lambda f: (f.bytes, f.name))
        add("archive", largest, [str(largest.first_id)], int(largest.first_size or 0))
    return articles, group


def _nfo_segments(segments: Iterable[tuple[int, str, int]], most: int) -> tuple[list[str], int]:
    """Message-ids from part 1 on, in order and without a gap, up to `most` bytes (one at
    least) and MAX_NFO_SEGMENTS: a poster's tiny segments must not make a lease the agent
    refuses (and so an inspection that fails without its par2 or archive read)."""
    ids: list[str] = []
    total = 0
    for expected, (part, message_id, size) in enumerate(sorted(segments), start=1):
        if part != expected or len(ids) == MAX_NFO_SEGMENTS or (ids and total + size > most):
            break
        ids.append(message_id)
        total += size
    return ids, total


def file_rows(rows: Iterable[Record]) -> dict[int, list[FileRow]]:
    """release_files' rows by release."""
    by_release: dict[int, list[FileRow]] = {}
    for row in rows:
        segments: tuple[tuple[int, str, int], ...] = ()
        if row.parts is not None:
            segments = tuple(zip(row.parts, row.message_ids, row.sizes, strict=True))
        by_release.setdefault(row.release_id, []).append(
            FileRow(row.group_id, row.name, row.bytes, row.first_id, row.first_size, segments)
        )
    return by_release


@dataclass
class PlanResult:
    read: int = 0  # releases read
    planned: int = 0  # rows inserted
    refreshed: int = 0  # queued rows given their releases' articles again
    reached: int = 0  # the plan mark after this step


@dataclass(frozen=True)
class Planned:
    release_id: int
    group_id: int
    posted: datetime
    articles: list[dict[str, Any]]
    segments: int  # the release's segments_present when its files were read


def _planned(releases: Sequence[Record], how: str) -> list[Planned]:
    """The rows for those of `releases` that need inspection and have a file."""
    wanted = [r for r in releases if needs_inspection(r.name, r.category, how)]
    if not wanted:
        return []
    files = file_rows(queries.fetchall("release_files", {"ids": [r.id for r in wanted]}))
    nfo_max = int(settings.INSPECT_NFO_MAX_BYTES)
    planned = []
    for release in wanted:
        articles, group = choose_articles(
            files.get(release.id, []), is_obfuscated(release.name), nfo_max
        )
        if group is None:  # no file yet: planned again when one comes (a later step)
            group = next((f.group_id for f in files.get(release.id, [])), None)
        if group is not None:
            planned.append(
                Planned(release.id, group, release.last_posted, articles, release.segments_present)
            )
    return planned


def _rows(planned: Sequence[Planned]) -> dict[str, list[Any]]:
    return {
        "group_ids": [p.group_id for p in planned],
        "posted": [p.posted for p in planned],
        "articles": [json.dumps(p.articles) for p in planned],
        "segments": [p.segments for p in planned],
    }


@dataclass(frozen=True)
class Mark:
    after: int  # releases above it are new: read forward
    below: int  # releases below it are the backlog: read newest first


def _mark(how: str) -> Mark:
    """The plan mark for `how`; a fresh one (nothing read, everything below the newest
    release is backlog) when there is none or it was for another mode."""
    mark = queries.fetchone("plan_mark", {})
    if mark is not None and mark.mode == how:
        return Mark(int(mark.after_id), int(mark.below_id))
    top = queries.fetchone("last_release_id", {})
    newest = int(top.id) if top is not None else 0
    return Mark(newest, newest + 1)


def plan_step(limit: int = PLAN_BATCH, *, how: str | None = None) -> PlanResult:
    """Plan up to `limit` releases not read yet, new ones first, then the backlog newest
    first; then refresh queued rows whose release changed."""
    how = mode() if how is None else how
    result = PlanResult()
    if how == "off":
        return result
    with transaction.atomic():
        mark = _mark(how)
        new = queries.fetchall("releases_after", {"after_id": mark.after, "limit": limit})
        room = limit - len(new)
        old = (
            queries.fetchall("releases_below", {"below_id": mark.below, "limit": room})
            if room > 0
            else []
        )
        planned = _planned([*new, *old], how)
        if planned:
            result.planned = queries.execute(
                "insert_inspections",
                {"release_ids": [p.release_id for p in planned], **_rows(planned)},
            )
        result.read = len(new) + len(old)
        after = int(new[-1].id) if new else mark.after
        below = int(old[-1].id) if old else mark.below
        result.reached = after
        queries.execute("set_plan_mark", {"after_id": after, "below_id": below, "mode": how})
    result.refreshed = refresh_changed()
    return result


def refresh_changed(limit: int = REFRESH_BATCH) -> int:
    """Give queued rows whose release changed since planning its articles again."""
    changed = queries.fetchall("changed_queued", {"limit": limit})
    if not changed:
        return 0
    by_release = {row.release_id: row.id for row in changed}
    releases = queries.fetchall("releases_by_id", {"ids": list(by_release)})
    planned = _planned(releases, "all")  # once planned, a row stays: refresh whatever it is
    return queries.execute(
        "refresh_inspections",
        {"ids": [by_release[p.release_id] for p in planned], **_rows(planned)},
    )


def plan_releases(release_ids: Sequence[int]) -> int:
    """Plan these releases now, whatever INSPECT_RELEASES says: a row for each without
    one, and the articles of each queued row read again. How many rows are queued."""
    releases = queries.fetchall("releases_by_id", {"ids": list(release_ids)})
    planned = _planned(releases, "all")
    if not planned:
        return 0
    params = {"release_ids": [p.release_id for p in planned], **_rows(planned)}
    queries.execute("insert_inspections", params)
    queries.execute("refresh_releases", params)
    return len(planned)


def plan_all(
    *, how: str | None = None, progress: Callable[[PlanResult], None] | None = None
) -> PlanResult:
    """Plan every release not read yet under this mode (`manage.py plan_inspections`)."""
    total = PlanResult()
    while True:
        step = plan_step(how=how)
        total.read += step.read
        total.planned += step.planned
        total.refreshed += step.refreshed
        total.reached = step.reached
        if progress is not None:
            progress(total)
        if step.read == 0:
            return total


def reset_mark() -> None:
    """Planning reads every release again, newest first (rows stay one per release)."""
    queries.execute("forget_plan_mark", {})


def count_would_plan(*, how: str | None = None, from_start: bool = False) -> tuple[int, int]:
    """(releases read, releases that need inspection) of those not read yet: a dry run."""
    how = mode() if how is None else how
    mark = _mark("" if from_start else how)  # no mode is "": a fresh mark
    read = wanted = 0
    for name, key, start in (
        ("releases_after", "after_id", mark.after),
        ("releases_below", "below_id", mark.below),
    ):
        while releases := queries.fetchall(name, {key: start, "limit": PLAN_BATCH}):
            read += len(releases)
            wanted += sum(1 for r in releases if needs_inspection(r.name, r.category, how))
            start = int(releases[-1].id)
    return read, wanted
