"""Writes of the catalog: merging reported files, publishing rule sets, pruning.

`store_files` is called by `seeding.services.report_batch` inside its
transaction: a batch is stored whole or not at all. Python groups the batch
by file key (a node's grouping is not trusted) and one SQL statement
(`merge_files` in sql/catalog.sql) merges it, whatever the number of files.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain, islice
from operator import lt
from typing import Any

from django.db import IntegrityError, transaction

from catalog.rulesets import current_rules, forget_current_rules
from catalog.sql import queries
from catalog.validation import FileReport, Segment
from core.errors import Invalid, NotFound
from core.pgarrays import Int4Array, Int8Array
from core.sql import slices
from indexer.models import AuditAction, Group
from indexer.services import record_audit
from usenet.categories import CategoryRules
from usenet.rules import RuleSet

from .identity import identify_report, release_key
from .models import CatalogFile, RuleSetVersion
from .releases import assign_releases, drop_empty_releases
from .selectors import CatalogTotals

__all__ = [
    "PruneSummary",
    "SummaryDrift",
    "delete_files",
    "prune_incomplete_files",
    "publish_rules",
    "rebuild_catalog_summary",
    "store_files",
]


# --- storing batches ----------------------------------------------------------


@dataclass(slots=True)
class _PendingFile:
    """One catalog file's share of a batch, merged from every report with its key."""

    key: bytes
    release_key: bytes | None
    subject: str
    poster: str
    name: str
    file_index: int | None
    file_count: int | None
    total: int
    date: int
    first_part: int
    # (part, article, message-id, bytes) sorted by part, one per part: the
    # common case (one report per file, parts in order) keeps the report's
    # own list; anything else goes through `by_part`.
    rows: list[Segment]
    # part -> segment once the rows needed sorting or merging; the first
    # report of a part wins.
    by_part: dict[int, Segment] | None = None
    conflicts: set[str] = field(default_factory=set)

    def add(self, segments: Sequence[Segment]) -> None:
        stored = self.by_part
        if stored is None:
            stored = self.by_part = {seg[0]: seg for seg in self.rows}
        for seg in segments:
            held = stored.get(seg[0])
            if held is None:
                stored[seg[0]] = seg
            elif held[2] != seg[2]:
                self.conflicts.add(seg[2])

    def sorted_rows(self) -> list[Segment]:
        stored = self.by_part
        if stored is None:
            return self.rows
        return [stored[part] for part in sorted(stored)]


def _in_part_order(segments: Sequence[Segment]) -> bool:
    """Whether the parts strictly increase (sorted, each part once)."""
    parts = [seg[0] for seg in segments]
    return all(map(lt, parts, islice(parts, 1, None)))


def _pending_files(
    rules: RuleSet, group: str, reports: Iterable[FileReport]
) -> dict[bytes, _PendingFile]:
    """The batch grouped by the key the coordinator derives (not the node's grouping)."""
    pending: dict[bytes, _PendingFile] = {}
    for report in reports:
        if rules.excludes_poster(report.poster):
            continue
        ident = identify_report(rules, group, report.poster, report.subject, report.total)
        segments = report.segments
        if ident.total < report.total:
            segments = [seg for seg in segments if seg[0] <= ident.total]
            if not segments:
                continue
        ordered = _in_part_order(segments)
        first_part = segments[0][0] if ordered else min(seg[0] for seg in segments)
        entry = pending.get(ident.key)
        if entry is None:
            entry = pending[ident.key] = _PendingFile(
                ident.key,
                release_key(group, report.poster, ident.name, ident.file_count),
                report.subject,
                report.poster,
                ident.name,
                ident.file_index,
                ident.file_count,
                ident.total,
                report.date,
                first_part,
                segments if ordered else [],
            )
            if not ordered:
                entry.add(segments)
            continue
        entry.date = min(entry.date, report.date)
        if (first_part, report.subject) < (entry.first_part, entry.subject):
            entry.first_part, entry.subject, entry.name = first_part, report.subject, ident.name
            entry.file_index, entry.file_count = ident.file_index, ident.file_count
            entry.release_key = release_key(group, report.poster, ident.name, ident.file_count)
        entry.add(segments)
    return pending


FILE_COLUMNS = (
    "keys", "release_keys", "subjects", "posters", "names", "file_indexes", "file_counts",
    "totals", "dates", "bytes", "firsts", "lasts", "message_ids", "conflict_ids",
)  # fmt: skip


def _merge_params(pending: Sequence[_PendingFile]) -> dict[str, Any]:
    """The parameters of merge_files.

    One list per file column, and the segments of every file end to end in
    three integer arrays (`parts`, `articles`, `sizes`) that the query slices
    at each file's `firsts`..`lasts` (1-based, inclusive); a file's
    message-ids as one space-separated text.
    """
    columns: tuple[list[Any], ...] = tuple([] for _ in FILE_COLUMNS)
    (keys, release_keys, subjects, posters, names, file_indexes, file_counts, totals, dates,
     sizes_total, firsts, lasts, ids_text, conflicts_text) = columns  # fmt: skip
    all_parts: list[int] = []
    all_articles: list[int] = []
    all_sizes: list[int] = []
    for entry in pending:
        parts, articles, message_ids, sizes = zip(*entry.sorted_rows(), strict=True)
        keys.append(entry.key)
        release_keys.append(entry.release_key)
        subjects.append(entry.subject)
        posters.append(entry.poster)
        names.append(entry.name)
        file_indexes.append(entry.file_index)
        file_counts.append(entry.file_count)
        totals.append(entry.total)
        dates.append(entry.date)
        sizes_total.append(sum(sizes))
        firsts.append(len(all_parts) + 1)
        all_parts += parts
        all_articles += articles
        all_sizes += sizes
        lasts.append(len(all_parts))
        ids_text.append(" ".join(message_ids))
        conflicts_text.append(
            " ".join(sorted(entry.conflicts.difference(message_ids))) if entry.conflicts else ""
        )
    params: dict[str, Any] = dict(zip(FILE_COLUMNS, columns, strict=True))
    params["parts"] = Int4Array(all_parts)
    params["articles"] = Int8Array(all_articles)
    params["sizes"] = Int4Array(all_sizes)
    return params


def store_files(
    group_id: int,
    range_id: int | None,
    files: Sequence[FileReport],
    fragments: Sequence[FileReport],
    group_name: str | None = None,
) -> int:
    """Merge a batch's files and fragments into the catalog of `group_id`.

    Returns how many catalog files the batch created or changed (a replayed
    batch: 0). The group's name (part of every key; read here unless the
    caller read it already, as `report_batch` does), the release queries
    (one or two: `releases.assign_releases`, which sets each file's release
    in the merge's own INSERT), the merge, and only when a release it created
    got no file, `drop_empty_releases`. Call it inside a transaction.
    """
    if not files and not fragments:
        return 0
    if group_name is None:
        row = queries.fetchone("group_name", {"group_id": group_id})
        if row is None:
            raise NotFound(f"Group {group_id} does not exist.")
        group_name = str(row.name)
    rules = current_rules()
    pending = _pending_files(rules, group_name, chain(files, fragments))
    if not pending:
        return 0
    ordered = [pending[key] for key in sorted(pending)]
    params = _merge_params(ordered)
    created: list[int] = []
    params["release_ids"] = assign_releases(group_name, rules.version, ordered, created)
    params["group_id"] = group_id
    params["rule_version"] = rules.version
    result = queries.fetchone_bound("merge_files", params)
    assert result is not None  # an aggregate: always one row
    drop_empty_releases(created, result.releases or ())
    return int(result.written)


# --- rule sets ----------------------------------------------------------------


def validated_rules(data: Any, version: int = 1) -> dict[str, Any]:
    """The stored form of a rule set (to_dict() without "version"), or Invalid."""
    if not isinstance(data, dict):
        raise Invalid("rules: a rule set is a JSON object.")
    data = {k: v for k, v in data.items() if k != "version"}
    try:
        rules = RuleSet.from_dict({**data, "version": version})
    except (TypeError, ValueError) as error:
        raise Invalid(f"rules: {error}") from None
    stored = rules.to_dict()
    stored.pop("version")
    return stored


def validated_categories(data: Any) -> list[dict[str, Any]]:
    """Category rules as stored (a list of rules), or Invalid naming the bad one."""
    if not isinstance(data, list):
        raise Invalid("categories: a list of category rules.")
    try:
        return CategoryRules(data).source
    except ValueError as error:
        raise Invalid(f"categories: {error}") from None


def publish_rules(
    data: Any,
    created_by: str = "",
    note: str = "",
    *,
    categories: Any = None,
    actor: Any = None,
) -> RuleSetVersion:
    """Store a new rule set version (never changing an old one) and return it.

    `categories` None keeps the category rules of the version before.
    """
    stored = validated_rules(data)
    stored_categories = None if categories is None else validated_categories(categories)
    for attempt in range(3):
        try:
            with transaction.atomic():
                row = queries.fetchone(
                    "publish_rule_set",
                    {
                        "rules": json.dumps(stored),
                        "categories": None
                        if stored_categories is None
                        else json.dumps(stored_categories),
                        "created_by": created_by[:150],
                        "note": note,
                    },
                )
                # Now (this connection sees the row) and again at commit, in
                # case another thread reloaded the old version meanwhile.
                forget_current_rules()
                transaction.on_commit(forget_current_rules)
        except IntegrityError:
            if attempt == 2:
                raise
            continue
        assert row is not None
        published = RuleSetVersion.objects.get(id=row.id)
        detail = {"version": published.version, "note": note}
        record_audit(actor, AuditAction.RULE_SET_PUBLISHED, "rule set", 1, detail)
        return published
    raise AssertionError("unreachable")


# --- retention ----------------------------------------------------------------


def delete_files(file_ids: Iterable[int], *, actor: Any = None) -> int:
    """Remove catalog files (an operator's choice in the admin).

    The group totals follow in the same transaction (the summary's delete
    trigger, which recounts a group's newest post date when its newest file
    goes).
    """
    ids = list(file_ids)
    deleted = sum(CatalogFile.objects.filter(id__in=batch).delete()[0] for batch in slices(ids))
    record_audit(actor, AuditAction.FILES_DELETED, "catalog file", deleted, {"ids": ids[:100]})
    return deleted


@dataclass
class PruneSummary:
    """What a prune deleted so far: the sums of the counts its batches' query returned."""

    cutoff: datetime  # files untouched since then were pruned
    files: int = 0
    segments: int = 0
    bytes: int = 0
    batches: int = 0

    def add(self, batch: Any) -> None:
        """Add the counts of one batch (a row of the prune query)."""
        self.files += int(batch.files)
        self.segments += int(batch.segments)
        self.bytes += int(batch.bytes)
        self.batches += 1


def prune_incomplete_files(
    older_than_hours: float,
    batch_size: int = 10_000,
    pause: float = 0.0,
    progress: Callable[[PruneSummary], None] | None = None,
    *,
    actor: Any = None,
) -> PruneSummary:
    """Delete incomplete files no batch added to for `older_than_hours`, in batches.

    The group totals follow each batch in its transaction (the summary's
    delete trigger). Each batch commits on its own so vacuum can reclaim space while the prune
    runs and no transaction holds locks for long. The cutoff is fixed at the
    start: files that go stale during the run wait for the next one.
    """
    if not (math.isfinite(older_than_hours) and older_than_hours > 0):
        raise Invalid("older_than_hours: must be a positive number of hours.")
    if batch_size < 1:
        raise Invalid("batch_size: must be at least 1.")
    row = queries.fetchone("prune_cutoff", {"seconds": older_than_hours * 3600})
    assert row is not None
    summary = PruneSummary(cutoff=row.cutoff)
    while True:
        with transaction.atomic():
            result = queries.fetchone(
                "prune_incomplete", {"cutoff": summary.cutoff, "limit": batch_size}
            )
        # An aggregate always answers one row; be safe anyway.
        if result is None or int(result.files) == 0:
            break
        summary.add(result)
        if progress is not None:
            progress(summary)
        if int(result.files) < batch_size:
            break
        if pause > 0:
            time.sleep(pause)
    detail = {
        "older_than_hours": older_than_hours,
        "segments": summary.segments,
        "bytes": summary.bytes,
        "batches": summary.batches,
    }
    record_audit(actor, AuditAction.CATALOG_PRUNED, "catalog file", summary.files, detail)
    return summary


# --- the group totals -----------------------------------------------------------


@dataclass(frozen=True)
class SummaryDrift:
    """A group whose kept totals differed from a recount of its files (now fixed)."""

    group: str
    kept: CatalogTotals
    counted: CatalogTotals


def _rebuild_group(group_id: int) -> tuple[CatalogTotals, CatalogTotals]:
    """Recount one group's totals under its exclusive lock; (kept, counted)."""
    with transaction.atomic():
        queries.fetchone("lock_group_catalog_summary", {"group_id": group_id})
        row = queries.fetchdicts("rebuild_group_catalog_summary", {"group_id": group_id})[0]
    kept = CatalogTotals.from_row(
        {k.removeprefix("kept_"): v for k, v in row.items() if k.startswith("kept_")}
    )
    return kept, CatalogTotals.from_row(row)


def rebuild_catalog_summary(
    progress: Callable[[int, int], None] | None = None, page: int = 1000
) -> tuple[int, list[SummaryDrift]]:
    """Recount every group's catalog totals from its files and put the count in place.

    One transaction per group, under the group's exclusive summary lock, so
    batches only wait for the recount of their own group (a batch still
    merging adds its deltas after it). Returns (groups checked, drifts found);
    `progress(done, total)` is called after each group.
    """
    total = Group.objects.count()
    drifts: list[SummaryDrift] = []
    done, after = 0, 0
    while rows := queries.fetchall("summary_group_ids", {"after": after, "limit": page}):
        for group in rows:
            kept, counted = _rebuild_group(group.id)
            if kept != counted:
                drifts.append(SummaryDrift(group.name, kept, counted))
            done += 1
            if progress is not None:
                progress(done, max(total, done))
        after = rows[-1].id
    return done, drifts
