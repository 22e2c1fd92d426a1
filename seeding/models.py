"""Seed nodes, the article ranges they lease, and the throughput rollup.

A range's priority follows one convention everywhere: a LOWER number is MORE
urgent. Ranges planned without a priority get settings.DEFAULT_PRIORITY
(100); the tail planner uses settings.TAIL_PRIORITY (10).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from core import columns
from indexer.models import Group, Node, SqlKept, holder_reference, unique_key


class RangeStatus(models.TextChoices):
    QUEUED = "queued"
    LEASED = "leased"
    DONE = "done"
    FAILED = "failed"


def default_priority() -> int:
    return int(settings.DEFAULT_PRIORITY)


class SeedRange(models.Model):
    """Articles start_id..end_id (inclusive) of one group.

    next_id is the resume point: the first article not reported yet
    (end_id + 1 once everything is reported). heartbeat_at and next_id are
    deliberately in no index, so the frequent batch and heartbeat updates
    stay HOT (see docs/performance.md).
    """

    group = models.ForeignKey(
        Group, on_delete=models.CASCADE, related_name="ranges", db_index=False
    )
    start_id = columns.BigIntegerField()
    end_id = columns.BigIntegerField()
    next_id = columns.BigIntegerField()
    status = models.CharField(max_length=8, choices=RangeStatus.choices, default=RangeStatus.QUEUED)
    priority = columns.IntegerField(default=default_priority)
    capture = models.BooleanField(default=False)
    node = holder_reference("ranges")
    epoch = columns.IntegerField(default=0)
    leased_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = columns.IntegerField(default=0)
    # Releases marked uncounted so far: past MAX_UNCOUNTED_RELEASES they count.
    uncounted_releases = columns.IntegerField(default=0, db_default=0)
    headers = columns.BigIntegerField(default=0)
    files = columns.BigIntegerField(default=0)
    fragments = columns.BigIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    done_at = models.DateTimeField(null=True, blank=True)
    rule_version = columns.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "seed_range"
        constraints = [
            models.CheckConstraint(
                condition=Q(start_id__lte=F("end_id")), name="seed_range_start_le_end"
            ),
            models.CheckConstraint(
                condition=Q(next_id__gte=F("start_id")) & Q(next_id__lte=F("end_id") + 1),
                name="seed_range_next_within",
            ),
            models.CheckConstraint(
                condition=~Q(status="leased")
                | (Q(node__isnull=False) & Q(heartbeat_at__isnull=False)),
                name="seed_range_leased_has_holder",
            ),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in RangeStatus]),
                name="seed_range_status_known",
            ),
            models.CheckConstraint(
                condition=Q(attempts__gte=0) & Q(epoch__gte=0), name="seed_range_counts"
            ),
            models.CheckConstraint(
                condition=Q(start_id__gte=0), name="seed_range_start_nonnegative"
            ),
            # A queued range has articles left: the paths that would queue one read to
            # its end make it done instead (an index on next_id to sweep them would
            # make every batch a non-HOT update).
            models.CheckConstraint(
                condition=~Q(status="queued") | Q(next_id__lte=F("end_id")),
                name="seed_range_queued_has_articles_left",
            ),
            # A done range did not fail: whichever way it became done, it has no error.
            models.CheckConstraint(
                condition=~Q(status="done") | Q(error=""), name="seed_range_done_without_error"
            ),
        ]
        indexes = [
            # The claim: queued ranges in urgency order, then plan order.
            models.Index(
                fields=["priority", "id"], condition=Q(status="queued"), name="seed_range_claim_idx"
            ),
            # Live and quiet leases: a small set, read by every claim.
            models.Index(
                fields=["priority", "id"],
                condition=Q(status="leased"),
                name="seed_range_leased_idx",
            ),
            # A node's live leases, counted against LEASE_MAX_PER_NODE on each lease call.
            models.Index(
                fields=["node"], condition=Q(status="leased"), name="seed_range_live_node_idx"
            ),
            # Coverage of a group (planning) and lanes in article order.
            models.Index(fields=["group", "start_id"], name="seed_range_group_start_idx"),
            models.Index(
                fields=["node"], condition=Q(node__isnull=False), name="seed_range_node_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_id}:{self.start_id}-{self.end_id}"


class HeaderRollup(SqlKept):
    """Headers reported per minute, node and group: throughput without scanning ranges."""

    bucket = models.DateTimeField()
    node = models.ForeignKey(Node, on_delete=models.CASCADE, db_index=False)
    group = models.ForeignKey(Group, on_delete=models.CASCADE, db_index=False)
    headers = columns.BigIntegerField(default=0)
    batches = columns.IntegerField(default=0)
    # Ranges the node finished in the minute, and the headers those ranges counted.
    ranges_finished = columns.IntegerField(default=0, db_default=0)
    finished_headers = columns.BigIntegerField(default=0, db_default=0)

    class Meta:
        db_table = "header_rollup"
        constraints = [
            unique_key("header_rollup", "bucket", "node", "group"),
        ]


class GroupRangeSummary(models.Model):
    """A group's ranges per status, kept current by triggers on seed_range.

    The dashboard and the metrics read totals and per-group coverage from
    here instead of scanning a million ranges. reached, headers and files of
    leased ranges are not summed here (batches would have to write this row
    each time, making nodes in one group wait on each other): they are read
    live from the few leased ranges. See migration 0003 and docs/console.md.
    """

    # The database cascades a group's deletion (an FK added in the migration);
    # Django must not collect these rows itself.
    group = models.ForeignKey(
        Group,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    status = models.CharField(max_length=8, choices=RangeStatus.choices)
    ranges = columns.BigIntegerField(default=0)
    articles = columns.BigIntegerField(default=0)
    reached = columns.BigIntegerField(default=0)
    headers = columns.BigIntegerField(default=0)
    files = columns.BigIntegerField(default=0)

    class Meta:
        db_table = "group_range_summary"
        constraints = [
            unique_key("group_range_summary", "group", "status"),
        ]

    def __str__(self) -> str:
        return f"group {self.group_id} {self.status}: {self.ranges} ranges"


class HeaderCounts(models.Model):
    """Headers and batches folded from header_rollup's minutes."""

    headers = columns.BigIntegerField(default=0)
    batches = columns.BigIntegerField(default=0)

    class Meta:
        abstract = True


class RollupHour(HeaderCounts):
    """Headers and batches per completed hour, folded from header_rollup once and kept."""

    hour = models.DateTimeField(primary_key=True)

    class Meta:
        db_table = "header_rollup_hour"

    def __str__(self) -> str:
        return f"{self.hour:%Y-%m-%d %H}:00 {self.headers} headers"


class NodeHeaderTotal(HeaderCounts):
    """A node's headers of all time, folded from header_rollup minutes before `HeaderFold`'s mark.

    All time = this row + the node's minutes at or after the mark (a few minutes'
    rows), so the status never sums a node's history (docs/console.md).
    """

    node = models.OneToOneField(
        Node, on_delete=models.CASCADE, primary_key=True, related_name="+", db_constraint=True
    )

    class Meta:
        db_table = "node_header_total"

    def __str__(self) -> str:
        return f"node {self.node_id}: {self.headers} headers"


class HeaderFold(SqlKept):
    """Where the per-node totals stop (one row, id 1): minutes before it are folded."""

    id = columns.IntegerField(primary_key=True, default=1)
    folded_before = models.DateTimeField()

    class Meta:
        db_table = "header_fold"
        constraints = [models.CheckConstraint(condition=Q(id=1), name="header_fold_one_row")]
