"""Writes of the group-lease protocol (window indexing): lanes, their ranges, snapshots.

A worker holds one lane (history or tail) of a group and asks for the lane's
ranges one after another in article order, carrying one window of open files
across them (docs/api.md, "Group leases"). Every statement lives in
`sql/lanes.sql`; the functions here are its only callers. A fenced statement
that matches nothing is explained by `_lane_lost` (unknown group: 404; not
this node's lane, or a stale epoch: 409).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import IO, Any

from django.conf import settings
from django.db import transaction

from catalog.rulesets import current_rules, rules_of_version
from core.crashpoints import crash_point
from core.errors import Invalid, LeaseLost, NotFound, TooLarge, checked_id
from core.metrics import LEASES
from indexer.models import AuditAction
from indexer.services import record_audit
from indexer.space import leasing_paused, room
from seeding import maintenance
from seeding.services import Offer, admit_lease
from usenet.rules import RuleSet
from usenet.snapshots import SnapshotCheck

from . import snapshot_objects, snapshots, upload_guard
from .lanes import LANES, lane_bounds
from .models import Lane
from .sql import queries

# The span of a lane that has handed nothing out: first > last, no article fits.
NO_ARTICLES = (1, 0)
# pg_advisory_xact_lock key that serializes hand-outs of group lanes ("lane").
LEASE_LOCK_KEY = 0x6C616E65


@dataclass(frozen=True)
class GroupRef:
    id: int
    name: str
    priority: int


@dataclass(frozen=True)
class SnapshotRef:
    """The lane's snapshot as a lease names it, with the lane's first and last
    article: the snapshot's files hold no segment outside them."""

    next: int
    size: int
    first: int | None = None
    last: int | None = None


@dataclass(frozen=True)
class LaneLease:
    group: GroupRef
    lane: str
    epoch: int
    rules: dict[str, Any]
    snapshot: SnapshotRef | None


LaneOffer = Offer[LaneLease]


@dataclass(frozen=True)
class LaneRange:
    """The next range of a lane: its span, resume point and own epoch."""

    id: int
    start: int
    end: int
    next: int
    epoch: int


@dataclass
class SnapshotFile:
    file: IO[bytes]
    next: int
    size: int


@dataclass(frozen=True)
class SnapshotLink:
    """A snapshot in object storage: a presigned URL to fetch it from."""

    url: str
    next: int
    size: int


def checked_lane(lane: str) -> str:
    if lane not in LANES:
        raise Invalid(f"lane: {lane!r} is not a lane; use one of {', '.join(LANES)}.")
    return lane


def checked_group_id(group_id: int) -> int:
    return checked_id(group_id, "Group")


# --- the lane summaries the choice reads -------------------------------------


def ensure_lane_config() -> bool:
    """Give the trigger the lane bounds of the settings; rebuild the summaries if they changed.

    Runs inside the hand-out lock. A rebuild (first use, or changed bounds)
    aggregates the open ranges once, with range writers waiting; otherwise
    this is one primary-key read.
    """
    bounds = lane_bounds()
    row = queries.fetchone("lane_config", {})
    wanted = (
        bounds["tail_max"],
        bounds["history_min"],
        bounds["history_max"],
        bounds["capture_only"],
    )
    saved = (
        None if row is None else (row.tail_max, row.history_min, row.history_max, row.capture_only)
    )
    if saved == wanted:
        return False
    _rebuild_lane_work(bounds)
    return True


def rebuild_lane_work() -> None:
    """Recount every lane's planned work from the ranges (operators, benchmarks)."""
    with transaction.atomic():
        queries.fetchone("lock_group_leases", {"key": LEASE_LOCK_KEY})
        _rebuild_lane_work(lane_bounds())


def _rebuild_lane_work(bounds: dict[str, Any]) -> None:
    """Save `bounds` for the trigger and recount the lanes' work, range writers waiting."""
    queries.execute("lock_ranges_for_rebuild", {})
    queries.execute("save_lane_config", bounds)
    queries.execute("clear_lane_work", {})
    queries.execute("fill_lane_work", bounds)
    queries.execute("create_worked_lanes", {})
    queries.execute("summarize_lanes", {})


# --- the protocol --------------------------------------------------------------


def lease_lane(node_id: int, lane: str) -> LaneOffer:
    """Hand a free group's lane to a node, or say why nothing is handed out."""
    checked_lane(lane)
    held = queries.fetchone("lanes_held", {"node_id": node_id, "ttl": settings.LEASE_TTL_SECONDS})
    admit_lease(node_id, lanes_held=int(held.held) if held else 0)
    retry = settings.LEASE_RETRY_AFTER_SECONDS
    if held is None or held.disabled:  # disabled elsewhere; its token is kept a while
        return LaneOffer(None, retry_after=retry)
    # The database over DB_MAX_BYTES pauses both lanes; a full catalog only
    # the history lane (the tail keeps new posts coming).
    reason = leasing_paused() if lane == Lane.HISTORY else room()
    if reason is not None:
        return LaneOffer(None, retry_after=retry, paused=reason)
    ttl = settings.LEASE_TTL_SECONDS
    with transaction.atomic():
        queries.fetchone("lock_group_leases", {"key": LEASE_LOCK_KEY})
        ensure_lane_config()
        lane_id = _choose_lane(lane, ttl)
        if lane_id is None:
            return LaneOffer(None, retry_after=retry)
        free = queries.fetchone("lock_free_lane", {"lane_id": lane_id, "ttl": ttl})
        if free is None:  # cannot happen under the lock; say "retry" rather than fail
            return LaneOffer(None, retry_after=retry)
        queries.execute(
            "reset_lane_ranges",
            {
                "group_id": free.group_id,
                "lane": lane,
                "ttl": ttl,
                "max_attempts": settings.MAX_ATTEMPTS,
                "last_holder": free.node_id,
            },
        )
        taken = queries.fetchone("take_lane", {"lane_id": lane_id, "node_id": node_id})
    assert taken is not None  # the row was locked above
    snapshot = None
    if taken.snapshot_next is not None:
        first, last = lane_article_span(taken.group_id, lane)
        snapshot = SnapshotRef(taken.snapshot_next, taken.snapshot_size or 0, first, last)
    LEASES.labels(kind="lane").inc()
    return LaneOffer(
        LaneLease(
            group=GroupRef(taken.group_id, taken.name, taken.priority),
            lane=lane,
            epoch=taken.epoch,
            rules=current_rules().to_dict(),
            snapshot=snapshot,
        )
    )


def _choose_lane(lane: str, ttl: int) -> int | None:
    """The free lane this turn goes to (odd turns by size, even by age), or None.

    Quiet range leases count as claimable once the sweep queues them: when
    nothing is claimable the sweep runs (as for a range lease) and the turn
    looks again.
    """
    turn = queries.fetchone("next_turn", {})
    by_size = turn is not None and turn.turn % 2 == 1
    pick = "pick_most_planned" if by_size else "pick_unheld_longest"
    chosen = queries.fetchone(pick, {"lane": lane, "ttl": ttl})
    if chosen is None and maintenance.run_task(maintenance.RETIRE):
        chosen = queries.fetchone(pick, {"lane": lane, "ttl": ttl})
    return None if chosen is None else int(chosen.id)


def _lane_lost(node_id: int, group_id: int, lane: str, epoch: int) -> Exception:
    row = queries.fetchone("lane_holder", {"group_id": group_id, "lane": lane})
    if row is None:
        return NotFound(f"Group {group_id} does not exist.")
    holder, current_epoch = row.node_id, row.epoch
    if holder != node_id:
        return LeaseLost(
            f"The {lane} lane of group {group_id} is not this node's now: "
            "drop the window and lease again."
        )
    return LeaseLost(
        f"Epoch {epoch} of the {lane} lane of group {group_id} is stale (the current one is "
        f"{current_epoch}): drop the window and lease again."
    )


def _fence(node_id: int, group_id: int, lane: str, epoch: int) -> tuple[int, int | None]:
    """The holder's heartbeat; returns (lane row id, range in work) or raises."""
    row = queries.fetchone(
        "touch_lane", {"group_id": group_id, "lane": lane, "node_id": node_id, "epoch": epoch}
    )
    if row is None:
        raise _lane_lost(node_id, group_id, lane, epoch)
    return row.id, row.range_id


def next_lane_range(
    node_id: int, group_id: int, lane: str, epoch: int, read: int | None = None
) -> LaneRange | None:
    """The holder's range in work, or the lane's next queued range leased to it; None: caught up.

    ``read``: the range in work the holder has read to its end, whose finish follows
    its last batch's answer. It is not answered again: the lane moves on while that
    range stays leased to the holder (its own epoch fences its batch and finish; a
    takeover resets it with the range in work).
    """
    checked_lane(lane)
    checked_group_id(group_id)
    with transaction.atomic():
        lane_id, range_in_work = _fence(node_id, group_id, lane, epoch)
        own = None if read is not None and read == range_in_work else range_in_work
        row = queries.fetchone(
            "next_lane_range",
            {
                **lane_bounds(),
                "group_id": group_id,
                "lane": lane,
                "node_id": node_id,
                "range_id": own,
                "rule_version": current_rules().version,
            },
        )
        handed = (
            None
            if row is None
            else LaneRange(row.id, row.start_id, row.end_id, row.next_id, row.epoch)
        )
        new_range = None if handed is None else handed.id
        if new_range != range_in_work:
            span = (None, None) if handed is None else (handed.start, handed.end)
            queries.execute(
                "set_lane_range",
                {"lane_id": lane_id, "range_id": new_range, "start": span[0], "end": span[1]},
            )
    return handed


def heartbeat_lane(node_id: int, group_id: int, lane: str, epoch: int) -> None:
    checked_lane(lane)
    _fence(node_id, checked_group_id(group_id), lane, epoch)


def release_lane(node_id: int, group_id: int, lane: str, epoch: int) -> None:
    """Give the lane back: its range in work is queued at its resume point."""
    checked_lane(lane)
    checked_group_id(group_id)
    row = queries.fetchone(
        "release_lane", {"group_id": group_id, "lane": lane, "node_id": node_id, "epoch": epoch}
    )
    if row is None or row.lanes != 1:
        raise _lane_lost(node_id, group_id, lane, epoch)


def count_finished_range(range_id: int, group_id: int, headers: int, **_signal: Any) -> None:
    """A finished range counts on the lane that handed it out (seeding's `range_finished`)."""
    queries.execute(
        "count_finished_range", {"range_id": range_id, "group_id": group_id, "headers": headers}
    )


def force_release_lanes(lane_ids: Iterable[int], *, actor: Any = None) -> int:
    """An operator takes lanes back; their holders are fenced. Returns how many were held."""
    ids = list(lane_ids)
    row = queries.fetchone("force_release_lanes", {"ids": ids, "node_ids": [], "holders": None})
    count = int(row.lanes) if row else 0
    detail = {"ids": ids[:100], "ranges_requeued": int(row.ranges) if row else 0}
    record_audit(actor, AuditAction.LEASE_FORCE_RELEASED, "group lane", count, detail)
    return count


def release_node_lanes(node_ids: Sequence[int], **_signal: Any) -> dict[str, int]:
    """Disabled nodes lose their lanes at once (indexer's `nodes_disabled`)."""
    holders = list(node_ids)
    row = queries.fetchone(
        "force_release_lanes", {"ids": [], "node_ids": holders, "holders": holders}
    )
    return {"lanes_ended": int(row.lanes) if row else 0}


# --- snapshots -----------------------------------------------------------------


def _locked_lane_row(node_id: int, group_id: int, lane: str, epoch: int) -> Any:
    return _holders_row("lock_lane_snapshot", node_id, group_id, lane, epoch)


def _holders_row(query: str, node_id: int, group_id: int, lane: str, epoch: int) -> Any:
    """The lane's row as `query` reads it for its holder at `epoch`; LeaseLost if
    the node does not hold the lane at that epoch."""
    params = {"group_id": group_id, "lane": lane, "node_id": node_id, "epoch": epoch}
    row = queries.fetchone(query, params)
    if row is None:
        raise _lane_lost(node_id, group_id, lane, epoch)
    return row


def store_snapshot(
    node_id: int,
    group_id: int,
    lane: str,
    epoch: int,
    next_article: int,
    chunks: Iterable[bytes],
    length: int | None,
) -> int:
    """Stream a lane's snapshot to storage and make it the lane's snapshot; returns its size.

    The holder is checked before a byte is read, while the body streams (the
    guard's keeper: a fenced upload stops with 409) and again, with the lane
    row locked, when the upload is recorded. One upload of a lane and epoch
    runs at a time (``upload_guard``); the body is checked as it streams (the format and what
    belongs to the lane, 400; the disk's room, 507) and a refused one leaves
    nothing behind. The file replaces the old one only once the record has
    committed, under a lock held from the commit to the rename: of two
    uploads the last to commit wins, whole, and a failed commit leaves the
    old file and no `.part`.
    """
    checked_lane(lane)
    checked_group_id(group_id)
    limit = settings.SNAPSHOT_MAX_BYTES
    if length is not None and length > limit:
        raise TooLarge(f"The snapshot is {length} bytes; SNAPSHOT_MAX_BYTES allows {limit} bytes.")
    if length == 0:
        raise Invalid(snapshots.EMPTY_SNAPSHOT)
    with transaction.atomic():
        row = _locked_lane_row(node_id, group_id, lane, epoch)
    holder = (node_id, group_id, lane, epoch)
    span = lane_article_span(group_id, lane)
    with upload_guard.one_upload(upload_guard.Holder(row.id, node_id, epoch)) as guard:
        check = _snapshot_check(row.name, span, guard)
        if snapshot_objects.in_object_storage():
            watch = snapshots.UploadWatch(check, guard, None)
            body = snapshots.checked_body(chunks, length, limit, watch)
            return _store_snapshot_object(holder, next_article, body)
        final = snapshots.snapshot_path(group_id, lane)
        watch = snapshots.UploadWatch(check, guard, snapshots.DiskRoom(final.parent, length))
        part, size = snapshots.write_part(
            final, snapshots.checked_body(chunks, length, limit, watch)
        )
        crash_point("snapshot.put.written")
        try:
            with snapshots.installing(final), transaction.atomic():
                _record_snapshot(holder, next_article, size, "")
                transaction.on_commit(lambda: snapshots.install(part, final))
        except BaseException:
            part.unlink(missing_ok=True)
            raise
    return size


def lane_article_span(group_id: int, lane: str) -> tuple[int, int]:
    """The first and last article of the ranges the lane has handed out: a snapshot's
    files hold no segment outside them (docs/window-indexing.md, "Snapshots").
    Before its first hand-out, (1, 0): no article fits."""
    row = queries.fetchone("lane_article_span", {"group_id": group_id, "lane": lane})
    if row is None or row.first is None:
        return NO_ARTICLES
    return int(row.first), int(row.last)


def _snapshot_check(
    group: str, span: tuple[int, int], guard: upload_guard.UploadGuard
) -> SnapshotCheck:
    """The format check of an upload to the lane of `group` with articles `span`.

    The header's rule set is read on the guard's own session: with object
    storage the body is read on the storage's threads, not the request's. A
    session that fails there is a 503 (``UploadGuard.fetchone``).
    """
    current = current_rules()

    def rules_of(version: int) -> RuleSet:
        if version == current.version:
            return current
        return rules_of_version(version, fetch=guard.fetchone)

    return SnapshotCheck(group, *span, rules_of, max_open=settings.SNAPSHOT_MAX_OPEN)


def _record_snapshot(
    holder: tuple[int, int, str, int], next_article: int, size: int, key: str
) -> Any:
    """Record an upload on the lane row, locked and fenced by the holder's epoch
    (node, group, lane, epoch); returns the row as it was before."""
    row = _locked_lane_row(*holder)
    queries.execute(
        "record_snapshot", {"lane_id": row.id, "next": next_article, "size": size, "key": key}
    )
    return row


def _store_snapshot_object(
    holder: tuple[int, int, str, int], next_article: int, body: Iterable[bytes]
) -> int:
    """The upload to an object of its own; the row switches to it in the commit that
    records it (fenced by the epoch), which also retires the object it replaces: that
    one is deleted once its presigned URLs have expired (``snapshot_objects``)."""
    key = snapshot_objects.new_key(holder[1], holder[2])
    size = snapshot_objects.save_object(key, body)
    try:
        with transaction.atomic():
            row = _record_snapshot(holder, next_article, size, key)
            if row.snapshot_key:
                queries.execute("retire_snapshot_object", {"key": row.snapshot_key})
    except BaseException:
        snapshot_objects.delete_object(key)
        raise
    return size


def open_snapshot(
    node_id: int, group_id: int, lane: str, epoch: int
) -> SnapshotFile | SnapshotLink:
    """The lane's snapshot, opened for streaming (the caller closes it), or with
    object storage a presigned URL of the object the row names."""
    checked_lane(lane)
    checked_group_id(group_id)
    if snapshot_objects.in_object_storage():
        return _snapshot_link(node_id, group_id, lane, epoch)
    final = snapshots.snapshot_path(group_id, lane)
    with snapshots.installing(final, shared=True), transaction.atomic():
        row = _holders_row("read_lane_snapshot", node_id, group_id, lane, epoch)
        name, snap_next = row.name, row.snapshot_next
        if snap_next is None:
            raise NotFound(f"The {lane} lane of group {group_id} has no snapshot yet.")
        handle = _open_first(
            final,
            snapshots.legacy_snapshot_path(group_id, name, lane),
        )
        if handle is None:
            raise NotFound(
                f"The snapshot of the {lane} lane of group {group_id} is missing on disk."
            )
    crash_point("snapshot.get.opened")
    return SnapshotFile(handle, snap_next, os.fstat(handle.fileno()).st_size)


def _snapshot_link(node_id: int, group_id: int, lane: str, epoch: int) -> SnapshotLink:
    row = _holders_row("read_lane_snapshot", node_id, group_id, lane, epoch)
    if row.snapshot_next is None or not row.snapshot_key:
        raise NotFound(f"The {lane} lane of group {group_id} has no snapshot yet.")
    url = snapshot_objects.download_url(row.snapshot_key)
    return SnapshotLink(url, row.snapshot_next, row.snapshot_size)


def _open_first(*paths: Any) -> IO[bytes] | None:
    """The first of `paths` that exists, opened for reading; None when none does."""
    for path in paths:
        try:
            return open(path, "rb")
        except FileNotFoundError:
            continue
    return None
