"""The upkeep's catch-up after an upgrade: releases read and counted again, a bounded number a run.

An installation that migrates keeps its releases as they were stored: their
name fields unread (`fields_version` below FIELDS_VERSION) and their totals
not counted the new way (`counted` false, migration 0005). Search serves
such a release when its stored totals are complete, as before the upgrade
(`catalog_release_served`), so nothing disappears meanwhile; the upkeep
(`backfill_releases`, registered in seeding.maintenance) does the rest with
the services of `manage.py parse_release_names` and `manage.py
recount_releases`, at most RELEASE_BACKFILL_BATCH releases of each a run:

- the fields: keyset by id from the position in catalog_release_backfill
  (the parser version it reads for, the last id read, the newest id when it
  began), locked (SKIP LOCKED: one process at a time) and moved in the
  transaction of each batch, so a killed run resumes;
  a new FIELDS_VERSION starts it again from the first release;
- the counts: the releases the partial index of `NOT counted` still holds,
  from the last id counted (the position row `recount`); the recount marks
  each one counted, so the index empties and a finished run costs one probe.

Docs: docs/catalog.md, "After an upgrade"; docs/deploy.md, "Upgrading".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from usenet.release_names import FIELDS_VERSION

from .release_counts import RecountSummary, recount_batch
from .release_fields import parse_batch
from .rulesets import category_rules, current_rules
from .sql import queries

logger = logging.getLogger(__name__)

BATCH = 1000  # releases (ids, for the fields) a transaction; RELEASE_BACKFILL_BATCH bounds a run
FIELDS = "fields"
RECOUNT = "recount"


@dataclass(frozen=True)
class BackfillStatus:
    """What is left, estimated without a scan."""

    to_parse: int  # at most this many releases left to read (ids past the position)
    to_count: int  # at most this many left to count again

    @property
    def done(self) -> bool:
        return self.to_parse == 0 and self.to_count == 0


def _take(name: str, version: int) -> tuple[int, int] | None:
    """(after, upto) of a backfill, locked for this transaction (started, or started again
    for a new version, if need be); None while another process's batch holds it."""
    queries.execute("create_backfill", {"name": name})
    row = queries.fetchone("take_backfill_position", {"name": name})
    if row is None:
        return None
    if row.version != version:
        row = queries.fetchone("start_backfill", {"name": name, "version": version})
        assert row is not None
    return int(row.after), int(row.upto)


def _move(name: str, after: int) -> None:
    queries.execute("move_backfill", {"name": name, "after": after})


def _parse(budget: int) -> int:
    """Walk at most `budget` release ids, reading the fields of those read under an older parser.

    Each batch asks the primary key for a window of BATCH ids at most, so a
    run reads a bounded stretch however many of them were read already; the
    position is locked and moved in the batch's transaction. Answers how
    many releases were read.
    """
    rules = None
    read = walked = 0
    while walked < budget:
        with transaction.atomic():
            position = _take(FIELDS, FIELDS_VERSION)
            if position is None or position[0] >= position[1]:
                break
            after, upto = position
            if rules is None:
                rule_version = current_rules().version
                rules = (rule_version, category_rules(rule_version))
            end = min(upto, after + min(BATCH, budget - walked))
            batch = parse_batch(rules, after=after, limit=BATCH, upto=end)
            _move(FIELDS, end)
        read += batch.releases
        walked += end - after
    return read


def _recount(budget: int) -> int:
    """Count at most `budget` releases again; answers how many were counted.

    The position is locked and moved in each batch's transaction. A batch
    that finds none may have lost its rows to a concurrent recount (a row
    counted meanwhile no longer matches): the step is done only when the
    partial index holds none past the position.
    """
    summary = RecountSummary()
    while summary.releases < budget:
        with transaction.atomic():
            position = _take(RECOUNT, 0)
            if position is None or position[0] >= position[1]:
                break
            after, upto = position
            limit = min(BATCH, budget - summary.releases)
            last = recount_batch(summary, after=after, limit=limit, uncounted_only=True)
            if not last:
                row = queries.fetchone("any_uncounted_after", {"after": after})
                if row is not None and row.left:
                    break  # the next run takes them
                last = upto
            _move(RECOUNT, last)
    return summary.releases


def _left(name: str, version: int) -> int | None:
    """The ids a backfill has left to walk (an upper bound), or None before it began."""
    row = queries.fetchone("backfill_position", {"name": name})
    if row is None or row.version != version:
        return None
    return max(0, int(row.upto) - int(row.after))


def backfill_status() -> BackfillStatus:
    """What the backfill has left, from its positions (no scan): at most this many releases.

    Before a step began: the newest release's id for the fields, the partial
    index's size in the statistics for the counts.
    """
    to_parse = _left(FIELDS, FIELDS_VERSION)
    if to_parse is None:
        row = queries.fetchone("newest_release_id", {})
        to_parse = int(row.id) if row else 0
    to_count = _left(RECOUNT, 0)
    if to_count is None:
        row = queries.fetchone("uncounted_estimate", {})
        to_count = int(row.estimate) if row else 0
    return BackfillStatus(to_parse, to_count)


def backfill_releases(budget: int | None = None) -> int:
    """The upkeep's step: at most `budget` (RELEASE_BACKFILL_BATCH) release ids walked for
    their fields, and as many releases counted again.

    Answers how many releases it read or counted; logs what is left while
    any is.
    """
    if budget is None:
        budget = int(settings.RELEASE_BACKFILL_BATCH)
    done = _parse(budget) + _recount(budget)
    if done:
        status = backfill_status()
        logger.info(
            "upgrade backfill: %d releases read or counted again; left: about %d to parse, "
            "about %d to count",
            done,
            status.to_parse,
            status.to_count,
        )
    return done


__all__ = ["BackfillStatus", "backfill_releases", "backfill_status"]
