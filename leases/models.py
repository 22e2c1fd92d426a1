"""Group leases (window indexing): one lease row per group and lane.

A lane is a slice of a group's ranges by priority. A trigger on seed_range
keeps each lane's open work current through `GroupLaneWork`, so choosing a
group is an index probe (docs/window-indexing.md).
"""

from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import F, Q
from django.db.models.functions import Now

from core import columns
from indexer.models import Group, SqlKept, holder_reference, optional_reference, unique_key
from seeding.models import SeedRange


class Lane(models.TextChoices):
    HISTORY = "history"
    TAIL = "tail"


def range_reference(**kwargs: Any) -> models.ForeignKey[SeedRange | None]:
    """An optional reference to a range, with no constraint: ranges may be deleted in bulk by SQL."""
    return optional_reference(
        SeedRange, "+", on_delete=models.DO_NOTHING, db_constraint=False, **kwargs
    )


class GroupLane(models.Model):
    group = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="lanes", db_index=False)
    lane = models.CharField(max_length=8, choices=Lane.choices)
    node = holder_reference("lanes", verbose_name="holder")
    epoch = columns.IntegerField(default=0, db_default=0)
    leased_at = models.DateTimeField(null=True, blank=True)
    # The holder's last heartbeat (`next`, snapshot and release stamp it too):
    # "unheld the longest" runs from here.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # When the lane was last taken or given back (shown; the choice reads heartbeat_at).
    last_held_at = models.DateTimeField(null=True, blank=True)
    # The range the lane's `next` handed out last.
    range = range_reference(verbose_name="range in work")
    snapshot_next = columns.BigIntegerField(null=True, blank=True)
    snapshot_size = columns.BigIntegerField(null=True, blank=True)
    snapshot_at = models.DateTimeField(null=True, blank=True)
    # With object storage (SNAPSHOT_STORAGE=s3): the snapshot's object, a key of
    # its own per upload, switched in the commit that records it.
    snapshot_key = models.CharField(max_length=255, blank=True, default="", db_default="")
    # The range in work's counters when the snapshot was taken at its `next`:
    # a takeover that moves that range back to the snapshot puts them back.
    snapshot_range = range_reference()
    snapshot_headers = columns.BigIntegerField(null=True, blank=True)
    snapshot_files = columns.BigIntegerField(null=True, blank=True)
    snapshot_fragments = columns.BigIntegerField(null=True, blank=True)
    # The first and last article of every range the lane's `next` ever handed
    # out (across holders): a window reads nothing else, so a snapshot holds no
    # segment outside them (the upload's check, the lease's snapshot.first/last).
    handed_first = columns.BigIntegerField(null=True, blank=True)
    handed_last = columns.BigIntegerField(null=True, blank=True)
    ranges_done = columns.BigIntegerField(default=0, db_default=0)
    headers = columns.BigIntegerField(default=0, db_default=0)
    # Maintained by the seed_range trigger: open work of the lane.
    planned_articles = columns.BigIntegerField(default=0, db_default=0)
    urgent_priority = columns.IntegerField(null=True, blank=True)
    # Also by the trigger: what the lane's `next` could take now, its queued
    # ranges with articles left, by those articles (next..end) and the most
    # urgent of their priorities (NULL: nothing to take, the lane is not offered).
    claimable_articles = columns.BigIntegerField(default=0, db_default=0)
    claimable_priority = columns.IntegerField(null=True, blank=True)
    # The group's priority, copied by triggers: the choice's last tie-break.
    group_priority = columns.IntegerField(default=0, db_default=0)

    class Meta:
        db_table = "group_lane"
        verbose_name = "group lease"
        constraints = [
            unique_key("group_lane", "group", "lane"),
            models.CheckConstraint(
                condition=Q(lane__in=[lane.value for lane in Lane]), name="group_lane_lane_known"
            ),
        ]
        indexes = [
            # The two turns of the choice, each an index probe in urgency order
            # (of the lane's claimable work); held lanes are few and are filtered
            # on the way. Ties go to the more urgent group, then the lower group id.
            models.Index(
                F("lane"),
                F("claimable_priority"),
                F("claimable_articles").desc(),
                F("group_priority"),
                F("group"),
                condition=Q(claimable_priority__isnull=False),
                name="group_lane_largest_idx",
            ),
            models.Index(
                F("lane"),
                F("claimable_priority"),
                F("heartbeat_at").asc(nulls_first=True),
                F("group_priority"),
                F("group"),
                condition=Q(claimable_priority__isnull=False),
                name="group_lane_unheard_idx",
            ),
            models.Index(
                fields=["node"], condition=Q(node__isnull=False), name="group_lane_node_idx"
            ),
            # The crowded range claim's free lanes, both lanes in one order
            # (leases/sql/schema.sql, seed_range_pick_unheld).
            models.Index(
                F("claimable_priority"),
                F("claimable_articles").desc(),
                F("group"),
                F("lane"),
                condition=Q(claimable_priority__isnull=False),
                name="group_lane_claim_order_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group} ({self.lane})"


class GroupLaneWork(SqlKept):
    """Open ranges and articles of one group's lane at one priority (trigger-maintained)."""

    # No constraint and no cascade: the trigger writes here while Django
    # deletes a group's ranges; stale zero rows are harmless.
    group = models.ForeignKey(
        Group, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False, related_name="+"
    )
    lane = models.CharField(max_length=8, choices=Lane.choices)
    priority = columns.IntegerField()
    # The queued ranges with articles left, and those articles (next..end): what
    # the lane could take now. Of all its open ranges by their whole span below.
    claimable_ranges = columns.BigIntegerField(default=0, db_default=0)
    claimable_articles = columns.BigIntegerField(default=0, db_default=0)
    ranges = columns.BigIntegerField(default=0)
    articles = columns.BigIntegerField(default=0)

    class Meta:
        db_table = "group_lane_work"
        constraints = [
            unique_key("group_lane_work", "group", "lane", "priority"),
        ]


class LaneConfig(models.Model):
    """The lane bounds the seed_range trigger classifies ranges by (one row, id 1)."""

    id = columns.IntegerField(primary_key=True, default=1)
    tail_max = columns.IntegerField()
    history_min = columns.IntegerField()
    history_max = columns.IntegerField()
    capture_only = models.BooleanField()

    class Meta:
        db_table = "group_lane_config"
        constraints = [models.CheckConstraint(condition=Q(id=1), name="group_lane_config_one_row")]

    def __str__(self) -> str:
        return f"tail <= {self.tail_max}, history {self.history_min}..{self.history_max}"


class LaneHandout(models.Model):
    """A range a lane's `next` handed out: the lane, and the range epoch it got.

    While the epochs match, the range's progress came from that lane's window,
    so that lane's takeover may move it back to the snapshot (whatever the lane
    bounds say now); a range lease since (a new epoch) owns its progress. Rows
    of the lane's ranges wholly before its latest snapshot are dropped when the
    snapshot is recorded, unless the range is still leased at that epoch.
    """

    range = models.OneToOneField(
        SeedRange,
        primary_key=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    epoch = columns.IntegerField()
    lane = models.CharField(max_length=8, choices=Lane.choices)

    class Meta:
        db_table = "lane_handout"

    def __str__(self) -> str:
        return f"range {self.range_id} @{self.epoch}"


class RetiredSnapshot(SqlKept):
    """An object (SNAPSHOT_STORAGE=s3) a newer upload replaced, kept until every
    presigned URL of it has expired (SNAPSHOT_URL_SECONDS), then deleted by the
    upkeep: a node that follows a URL handed out just before the replacement
    still downloads the whole snapshot it was promised."""

    key = models.CharField(max_length=255, primary_key=True)
    retired_at = models.DateTimeField(db_default=Now())

    class Meta:
        db_table = "lane_snapshot_retired"
