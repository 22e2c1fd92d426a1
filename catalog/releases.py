"""Releases in the batch path: the release of each file, found or created before the merge.

`assign_releases` runs inside `store_files`, before `merge_files`, so each
file's INSERT carries its `release_id` and no file row is written twice.
A release is keyed by (poster, name stem, file count), the catalog's
release key without the group, so a cross-posted release is one release;
a file joins the release of its key whose posting window (its files'
earliest to latest date, widened by a day on each side) holds its date.
A new release's name fields and category (catalog.release_fields) are in
the same INSERT. Totals are added by triggers on catalog_file (sql/schema.sql).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import transaction

from catalog.rulesets import category_rules
from catalog.sql import queries
from usenet.rules import keyed_digest

from .identity import release_stem
from .release_fields import decide_category, field_params, read_name

RELEASE_PERSON = b"usenet-releases1"


class ReleaseFile(Protocol):
    """What assigning a release needs of a batch's file (services._PendingFile)."""

    release_key: bytes | None
    poster: str
    name: str
    file_count: int | None
    date: int


@dataclass(slots=True)
class _Wanted:
    key: bytes
    name: str
    poster: str
    files_expected: int | None
    first: int
    last: int


def release_identity(poster: str, name: str, file_count: int) -> bytes:
    """The key of a file's release: poster, name stem and file count (no group)."""
    return keyed_digest(RELEASE_PERSON, (poster, release_stem(name)), file_count)


def release_name(file_name: str) -> str:
    """A release's name: its files' common stem, part and volume suffixes cut off."""
    return _name_of_stem(release_stem(file_name), file_name)


def _name_of_stem(stem: str, file_name: str) -> str:
    return stem.strip(" ._-") or file_name


def _wanted(files: Sequence[ReleaseFile]) -> tuple[list[bytes | None], dict[bytes, _Wanted]]:
    """Each file's release key (None: no release) and each key's dates in the batch."""
    keys: list[bytes | None] = []
    wanted: dict[bytes, _Wanted] = {}
    # One digest per release, not per file: its files share (poster, stem, count).
    digests: dict[tuple[str, str, int], bytes] = {}
    for item in files:
        if item.release_key is None or item.file_count is None:
            keys.append(None)
            continue
        stem = release_stem(item.name)
        key = digests.get((item.poster, stem, item.file_count))
        if key is None:
            key = digests[item.poster, stem, item.file_count] = keyed_digest(
                RELEASE_PERSON, (item.poster, stem), item.file_count
            )
        keys.append(key)
        entry = wanted.get(key)
        if entry is None:
            wanted[key] = _Wanted(
                key,
                _name_of_stem(stem, item.name),
                item.poster,
                item.file_count,
                item.date,
                item.date,
            )
        else:
            entry.first = min(entry.first, item.date)
            entry.last = max(entry.last, item.date)
    return keys, wanted


def _create(
    group: str, rule_version: int, missing: list[_Wanted], existing: list[int], created: list[int]
) -> dict[bytes, int]:
    """Create the releases no batch has made yet (find_releases took their keys'
    advisory locks), using those another batch made meanwhile, and lock the
    batch's existing releases with those in id order: one statement."""
    missing.sort(key=lambda w: w.key)
    overrides = category_rules(rule_version)
    fields = [read_name(w.name) for w in missing]
    params = {
        "keys": [w.key for w in missing],
        "names": [w.name for w in missing],
        "posters": [w.poster for w in missing],
        "files_expected": [w.files_expected for w in missing],
        "firsts": [w.first for w in missing],
        "lasts": [w.last for w in missing],
        "categories": [
            decide_category(overrides, f, w.name, [group])
            for f, w in zip(fields, missing, strict=True)
        ],
        "rule_version": rule_version,
        "group": group,
        "existing": existing,
        **field_params(fields),
    }
    rows = [r for r in queries.fetchall_bound("create_releases", params) if r.key is not None]
    created.extend(r.id for r in rows if r.created)
    return {bytes(r.key): r.id for r in rows}


def assign_releases(
    group: str, rule_version: int, files: Sequence[ReleaseFile], created: list[int]
) -> list[int | None]:
    """The release id of each of `files` (None: no release), creating releases as needed.

    Finding them (and, when all exist, locking them in id order in the same
    statement), or else creating them in a second statement. For that, the
    first statement locks no release row and takes the missing keys' advisory
    locks, in key order (one transaction at a time creates a key's release,
    and no batch holds a release row while it waits for a key); the second,
    in a new snapshot, creates the releases still missing and locks the
    existing ones in id order with those another batch made while this one
    waited (a batch merging into a release it has not locked would count
    twice a cross-posted file a concurrent batch writes). The ids of the
    releases it created are added to `created` (`drop_empty_releases` after
    the merge). Call it inside the batch's transaction, before the merge.
    """
    keys, wanted = _wanted(files)
    if not wanted:
        return [None] * len(files)
    order = sorted(wanted)
    rows = queries.fetchall_bound(
        "find_releases",
        {
            "keys": order,
            "firsts": [wanted[k].first for k in order],
            "lasts": [wanted[k].last for k in order],
        },
    )
    ids: dict[bytes, int] = {bytes(r.key): r.id for r in rows if r.id is not None}
    missing = [w for k, w in wanted.items() if k not in ids]
    if missing:  # find_releases locked no release row, and took the missing keys' locks
        ids.update(_create(group, rule_version, missing, sorted(ids.values()), created))
    return [None if key is None else ids[key] for key in keys]


# --- recategorizing ------------------------------------------------------------


@dataclass
class RecategorizeSummary:
    version: int
    releases: int = 0
    total: int = 0


def recategorize_releases(
    version: int,
    batch_size: int = 1000,
    progress: Callable[[RecategorizeSummary], None] | None = None,
) -> RecategorizeSummary:
    """Decide again, under rule set `version`, the category of every release decided before it.

    One transaction per batch of `batch_size` releases (keyset by id); a
    release is marked with the version it was decided under, so a run that
    stops resumes where it was, and a second run finds nothing to do.
    """
    overrides = category_rules(version)
    row = queries.fetchone("count_releases_to_recategorize", {"version": version})
    summary = RecategorizeSummary(version, total=int(row.releases) if row else 0)
    after = 0
    while rows := queries.fetchall(
        "releases_to_recategorize", {"version": version, "after": after, "limit": batch_size}
    ):
        params: dict[str, Any] = {
            "ids": [r.id for r in rows],
            "categories": [
                decide_category(overrides, read_name(r.name), r.name, r.groups) for r in rows
            ],
            "version": version,
        }
        with transaction.atomic():
            queries.execute("set_release_categories", params)
        summary.releases += len(rows)
        after = rows[-1].id
        if progress is not None:
            progress(summary)
    return summary


def drop_empty_releases(created: list[int], joined: Sequence[int]) -> None:
    """After the merge: drop the releases this batch created that no file joined
    (`joined`: the releases of the files the merge wrote). Usually every one was
    joined, and no statement is sent."""
    empty = set(created).difference(joined)
    if empty:
        queries.execute("drop_empty_releases", {"ids": sorted(empty)})


__all__ = [
    "RecategorizeSummary",
    "assign_releases",
    "drop_empty_releases",
    "recategorize_releases",
    "release_identity",
    "release_name",
]
