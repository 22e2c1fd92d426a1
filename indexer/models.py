"""Newsgroups the coordinator indexes."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class Group(models.Model):
    name = models.CharField(max_length=255, unique=True)
    active = models.BooleanField(default=True)
    # A lower number is more urgent (the same convention as seed ranges).
    priority = models.IntegerField(default=100)
    # Where live indexing began: history planning stops at the article
    # posted at this time.
    created_at = models.DateTimeField(auto_now_add=True)
    # While a backfill runs it walks down from backfill_next_id towards
    # backfill_until_id; planning takes over the rest.
    backfill_next_id = models.BigIntegerField(null=True, blank=True)
    backfill_until_id = models.BigIntegerField(null=True, blank=True)

    class Meta:
        db_table = "news_group"
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(backfill_next_id__isnull=True)
                | Q(backfill_until_id__isnull=True)
                | Q(backfill_until_id__lte=models.F("backfill_next_id")),
                name="news_group_backfill_order",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def backfill_running(self) -> bool:
        return (
            self.backfill_next_id is not None
            and self.backfill_until_id is not None
            and self.backfill_next_id > self.backfill_until_id
        )


# The catalog lives in its own package but belongs to this app (its
# migrations are in indexer/migrations).
from indexer.catalog.models import CatalogFile, RuleSetVersion  # noqa: E402

__all__ = ["CatalogFile", "Group", "RuleSetVersion"]
