"""The lease machinery every work table shares: seed ranges, and inspections above.

A work table (`WorkTable`) has the lease columns (status queued / leased /
done / failed, node_id, epoch, attempts, uncounted_releases, heartbeat_at,
error) and names its statements in its app's SQL registry: the gate and
claim in one statement, heartbeat, release, the quiet-lease sweep, the end
of a disabled node's leases, and the holder read when a fenced statement
matched nothing. This module holds what is the same for all of them:

- the gate: one hit on the node's lease-call bucket (shared by every kind of
  lease) and its live leases of this table against the table's cap setting;
- pausing while the database or the catalog is over its space limit;
- epoch fencing: why a fenced statement matched nothing (404 or 409);
- a release's attempts (failed with the error once MAX_ATTEMPTS are used;
  `uncounted` gives one back, at most MAX_UNCOUNTED_RELEASES times);
- the TTL sweep (quiet leases: failed when out of attempts, else queued);
- the lease call's flow (`WorkTable.lease`): paused, the upkeep when due, the
  node's lease lock on the table (sql/leasing.sql: overlapping calls of one node
  take turns, each counting what the one before claimed), the gated claim, and
  when it claims nothing the sweep once and the claim again, ungated (the call
  was counted once, by the gate).

Each table's statements keep their own rules where the work differs (a
range read to its end is done, not queued).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.db import transaction

from core.errors import LeaseLost, NotFound, Throttled, TooManyLeases
from core.sql import Queries, Record
from core.throttle import Window, check_window
from indexer.space import leasing_paused

from .sql import queries as leasing_queries

L = TypeVar("L")

LEASED = "leased"


@dataclass(frozen=True)
class Offer(Generic[L]):
    """A lease handed out, or none: then retry after so many seconds, or why leasing is paused.

    ``more``: the leases handed out beside ``lease`` by a call that asked for several
    (WorkTable.lease's `count`), newest first as ``lease`` is."""

    lease: L | None
    retry_after: int | None = None
    paused: str | None = None
    more: tuple[L, ...] = ()

    @property
    def leases(self) -> list[L]:
        """Every lease handed out, ``lease`` first."""
        return [] if self.lease is None else [self.lease, *self.more]


def lease_rate_key(node_id: int) -> str:
    """The rate bucket of a node's lease calls (range, group and inspection leases share it)."""
    return f"lease:{node_id}"


def retry_after() -> int:
    return int(settings.LEASE_RETRY_AFTER_SECONDS)


@dataclass(frozen=True)
class WorkTable:
    """One table of leased work and the names of its statements in `queries`.

    Every statement takes the row's id as `id_param` and, where it acts on a
    lease, node_id and epoch (fencing).
    """

    noun: str  # "range": in sentences ("Range 4 does not exist.")
    queries: Queries
    id_param: str  # "range_id"
    cap_setting: str  # the setting capping one node's live leases of this table
    gate: str  # the gate alone: hits, retry_after, live
    # The gate and the claim in one statement: hits, retry_after, live, disabled and
    # the claimed row's columns (id null: nothing claimed, or the gate refused).
    gated_claim: str
    claim: str  # the claim alone: the row claimed, or none
    sweep_task: str  # the upkeep task (seeding/maintenance.py) that runs `retire`
    holder: str  # status, node_id, epoch of one row
    heartbeat: str
    release: str
    retire: str
    end_node: str
    # A node's calls take turns under its lease lock (lock_node_leases): for a table
    # whose call hands out several rows at once (inspections), where overlapping
    # calls of one node could each claim up to its cap. Ranges hand out one a call:
    # an overlap oversteps the cap by that one, and the lock would cost the fleet's
    # most frequent call three more round trips (BEGIN, the lock, COMMIT).
    takes_turns: bool = False

    @property
    def cap(self) -> int:
        return int(getattr(settings, self.cap_setting))

    # --- the gate ---------------------------------------------------------

    def gate_params(self, node_id: int) -> dict[str, Any]:
        """The gate's parameters for a node (rate bucket, window, cap, rate)."""
        return {
            "key": lease_rate_key(node_id),
            "window": 60,
            "node_id": node_id,
            "cap": self.cap,
            "rate": settings.LEASE_RATE_PER_MINUTE,
        }

    def check_gate(self, hits: int, retry_after: int, live: int) -> None:
        """Throttled beyond LEASE_RATE_PER_MINUTE; TooManyLeases when `live` reaches the cap."""
        check_window(Window(hits, retry_after), settings.LEASE_RATE_PER_MINUTE, "lease calls")
        cap = self.cap
        if cap and live >= cap:
            raise TooManyLeases(
                f"This node holds {live} live leases, the most one node may hold "
                f"({self.cap_setting}={cap}): finish or release one before leasing another.",
                settings.LEASE_RETRY_AFTER_SECONDS,
            )

    def admit(self, node_id: int, also_held: int = 0) -> None:
        """Count a lease call against the node's rate and refuse it at the cap, counting
        `also_held` leases of another kind with this table's (a lane's ranges)."""
        row = self.queries.fetchone(self.gate, self.gate_params(node_id))
        assert row is not None  # the upsert always returns its row
        self.check_gate(row.hits, row.retry_after, row.live + also_held)

    def paused_offer(self, node_id: int) -> Offer[Any] | None:
        """An empty offer saying why leasing is paused (the call still counts), or None."""
        reason = leasing_paused()  # space limits, indexer/space.py
        if reason is None:
            return None
        self.admit(node_id)
        return Offer(None, retry_after=retry_after(), paused=reason)

    # --- the lease call -----------------------------------------------------

    def lease(
        self,
        node_id: int,
        params: Mapping[str, Any],
        build: Callable[[Record], L],
        count: int | None = None,
    ) -> Offer[L]:
        """Hand rows to a node (`build` makes the lease of a claimed row), or say
        why nothing is handed out: paused (the call still counts); else the upkeep
        when its per-process interval is due, then (for a table that takes_turns, in
        one transaction under the node's lock on this table, lock_node_leases:
        overlapping calls of one node take turns, so each counts what the one
        before claimed) the gate and the
        claim in one statement (Throttled, TooManyLeases, raised once the call's hit
        is committed). When that claims nothing, quiet leases are swept (once a call,
        and not when the upkeep just swept them) and, when that freed any, the claim
        runs again without the gate, under the same lock: the call was counted.
        Never a sweep inside each claim: that keeps a scan of the leased rows off
        the hot path (docs/performance.md).

        `count` (a table whose claim takes one, inspections): claim up to that many
        rows in the one statement, no more than the table's cap leaves the node; the
        first is the offer's ``lease``, the others its ``more``. None: the claim's own
        (one row)."""
        from . import maintenance  # it imports the tables (ranges.py): read when called

        paused = self.paused_offer(node_id)
        if paused is not None:
            return paused
        if count is not None:
            params = {**params, "count": count}
        sweep = maintenance.task_named(self.sweep_task)
        swept = any(done.task is sweep for done in maintenance.run_due())
        refused: Exception | None = None
        with transaction.atomic() if self.takes_turns else nullcontext():
            if self.takes_turns:
                # The node's lock first, in a statement of its own: the gated claim's
                # snapshot then counts what the node's previous call claimed (that
                # call committed before this lock was granted), so overlapping calls
                # of one node still hold it to its cap.
                leasing_queries.execute(
                    "lock_node_leases", {"table": self.noun, "node_id": node_id}
                )
            gated_rows = self.queries.fetchall(
                self.gated_claim, {**params, **self.gate_params(node_id)}
            )
            gated = gated_rows[0]  # the gate's upsert always returns its row
            try:
                self.check_gate(gated.hits, gated.retry_after, gated.live)
            except Throttled as exc:  # TooManyLeases too: raised once the hit is committed
                refused = exc
            rows = [row for row in gated_rows if row.id is not None]
            if refused is None and not gated.disabled and not rows and not swept:
                if maintenance.run_task(sweep):
                    if count is not None and self.cap:  # what the cap left this call
                        params = {**params, "count": min(count, self.cap - gated.live)}
                    rows = self.queries.fetchall(self.claim, params)
        if refused is not None:
            raise refused
        if gated.disabled:  # disabled elsewhere; this process keeps its token a while
            return Offer(None, retry_after=retry_after())
        if not rows:
            return Offer(None, retry_after=retry_after())
        first, *others = (build(row) for row in rows)
        return Offer(first, more=tuple(others))

    # --- fencing ----------------------------------------------------------

    def holder_of(self, work_id: int) -> Record | None:
        return self.queries.fetchone(self.holder, {self.id_param: work_id})

    def lease_lost(
        self, node_id: int, work_id: int, epoch: int, row: Record | None = None
    ) -> Exception:
        """Why a fenced statement matched nothing; `row` is holder_of's, if already read."""
        row = row if row is not None else self.holder_of(work_id)
        noun, title = self.noun, self.noun.capitalize()
        if row is None:
            return NotFound(f"{title} {work_id} does not exist.")
        if row.status != LEASED:
            return LeaseLost(
                f"{title} {work_id} is {row.status}, not leased: lease another {noun}."
            )
        if row.node_id != node_id:
            return LeaseLost(
                f"{title} {work_id} is leased to another node now: drop it and lease again."
            )
        return LeaseLost(
            f"Epoch {epoch} of {noun} {work_id} is stale (the current one is {row.epoch}): "
            "drop it and lease again."
        )

    def fenced(self, node_id: int, work_id: int, epoch: int) -> dict[str, Any]:
        return {self.id_param: work_id, "node_id": node_id, "epoch": epoch}

    # --- a held lease -----------------------------------------------------

    def keep_alive(self, node_id: int, work_id: int, epoch: int) -> None:
        if self.queries.execute(self.heartbeat, self.fenced(node_id, work_id, epoch)) != 1:
            raise self.lease_lost(node_id, work_id, epoch)

    def give_back(
        self,
        node_id: int,
        work_id: int,
        epoch: int,
        error: str | None = None,
        uncounted: bool = False,
    ) -> str:
        """Queued again, or failed once its attempts are used up; the status it has now."""
        row = self.queries.fetchone(
            self.release,
            {
                **self.fenced(node_id, work_id, epoch),
                "uncounted": uncounted,
                "max_uncounted": settings.MAX_UNCOUNTED_RELEASES,
                "max_attempts": settings.MAX_ATTEMPTS,
                "error": error or None,  # the statement keeps its first 2,000 characters
            },
        )
        if row is None:
            raise self.lease_lost(node_id, work_id, epoch)
        return str(row.status)

    # --- upkeep -----------------------------------------------------------

    def retire_quiet(self) -> int:
        """Quiet leases (no heartbeat for LEASE_TTL_SECONDS): failed when out of attempts,
        else queued for the next node (whose claim bumps the epoch)."""
        return self.queries.execute(
            self.retire,
            {"ttl": settings.LEASE_TTL_SECONDS, "max_attempts": settings.MAX_ATTEMPTS},
        )

    def end_node_leases(self, node_ids: Sequence[int]) -> int:
        """Disabled nodes lose their leases of this table at once."""
        return self.queries.execute(self.end_node, {"ids": list(node_ids)})
