"""The inspection work: one row per release whose files nodes read (issue 26).

A row names the articles to fetch (`articles`: role, message-ids, bytes,
name) and leases like a seed range (seeding/leasing.py): status, node,
epoch, attempts, heartbeat, error. Newest releases are handed out first
(`posted`, the release's last post), so what clients poll is named soonest.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from core import columns
from indexer.models import Group, SqlKept, holder_reference


class InspectionStatus(models.TextChoices):
    QUEUED = "queued"
    LEASED = "leased"
    DONE = "done"
    FAILED = "failed"


class Inspection(models.Model):
    """One release to inspect, and the articles a node reads for it.

    `articles` is a list of {"role": "par2"|"nfo"|"archive", "message_ids":
    [...], "bytes": int, "name": str}, at most one per role; planning keeps it
    current while the row is queued (a release whose files change before
    inspection gets its articles again). A queued row with no articles yet
    waits for its files and is never handed out.
    """

    # The database cascades a release's deletion (the catalog deletes releases
    # in SQL); the constraint is added in migration 0001.
    release = models.OneToOneField(
        "catalog.Release", on_delete=models.DO_NOTHING, db_constraint=False, related_name="+"
    )
    group = models.ForeignKey(Group, on_delete=models.CASCADE, db_index=False, related_name="+")
    posted = models.DateTimeField()
    articles = models.JSONField(default=list)
    status = models.CharField(
        max_length=8, choices=InspectionStatus.choices, default=InspectionStatus.QUEUED
    )
    node = holder_reference("inspections")
    epoch = columns.IntegerField(default=0)
    attempts = columns.IntegerField(default=0)
    uncounted_releases = columns.IntegerField(default=0)
    leased_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    done_at = models.DateTimeField(null=True, blank=True)
    # When planning last read the release's files for `articles`, and the
    # release's segments_present then: a release whose count moved has new files.
    planned_at = models.DateTimeField()
    planned_segments = columns.BigIntegerField(default=0)
    # What applying the node's report answered (name, category, renamed, why).
    outcome = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "inspection"
        ordering = ["-posted", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=~Q(status="leased")
                | (Q(node__isnull=False) & Q(heartbeat_at__isnull=False)),
                name="inspection_leased_has_holder",
            ),
            models.CheckConstraint(
                condition=Q(status__in=[s.value for s in InspectionStatus]),
                name="inspection_status_known",
            ),
            models.CheckConstraint(
                condition=Q(attempts__gte=0) & Q(epoch__gte=0) & Q(uncounted_releases__gte=0),
                name="inspection_counts",
            ),
            models.CheckConstraint(
                condition=~Q(status="done") | Q(error=""), name="inspection_done_without_error"
            ),
        ]
        indexes = [
            # The claim: queued rows that name articles, newest release first.
            models.Index(
                models.F("posted").desc(),
                models.F("id").desc(),
                condition=Q(status="queued") & ~Q(articles=[]),
                name="inspection_claim_idx",
            ),
            # A node's live leases (the cap) and the quiet-lease sweep.
            models.Index(
                fields=["node"], condition=Q(status="leased"), name="inspection_live_node_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"inspection {self.pk} of release {self.release_id}"


class InspectionPlanMark(SqlKept):
    """Where planning is (one row, id 1), for `mode`: releases after `after_id` are new
    (read forward, as they come) and those below `below_id` are the backlog (read
    newest first, down to the first release); everything between was read."""

    id = columns.IntegerField(primary_key=True, default=1)
    after_id = columns.BigIntegerField(default=0)
    below_id = columns.BigIntegerField(default=0)
    mode = models.TextField()

    class Meta:
        db_table = "inspection_plan_mark"
        constraints = [models.CheckConstraint(condition=Q(id=1), name="inspection_plan_mark_one")]
