"""API users of the newznab API: keys (digests only), their daily counts, the rate window."""

from __future__ import annotations

from django.db import models

from core import columns


class ApiKey(models.Model):
    """One API user. Not a node: a downloader or an indexer manager that searches."""

    name = models.CharField(max_length=100, unique=True)
    # SHA-256 hex of the key; the key itself is shown once and never stored.
    key_hash = models.CharField(max_length=64, unique=True)
    disabled = models.BooleanField(default=False)
    rate_limit = columns.PositiveIntegerField(
        null=True, blank=True, help_text="Requests per minute; empty: NEWZNAB_RATE_LIMIT."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "newznab_api_key"
        ordering = ["name"]
        verbose_name = "API key"

    def __str__(self) -> str:
        return self.name


class ApiKeyDay(models.Model):
    """Requests (limited: how many got 429) and grabs of one key on one UTC day."""

    key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="days")
    day = models.DateField()
    requests = columns.BigIntegerField(default=0)
    grabs = columns.BigIntegerField(default=0)
    limited = columns.BigIntegerField(default=0)

    class Meta:
        db_table = "newznab_api_key_day"
        ordering = ["-day"]
        constraints = [
            models.UniqueConstraint(fields=["key", "day"], name="newznab_api_key_day_unique")
        ]

    def __str__(self) -> str:
        return f"{self.day}: {self.requests} requests, {self.grabs} grabs"


class RateWindow(models.Model):
    """A key's requests in the current minute: one row a key, in PostgreSQL so the
    limit holds across every coordinator host and worker."""

    key = models.OneToOneField(ApiKey, on_delete=models.CASCADE, primary_key=True)
    window_start = models.DateTimeField()
    requests = columns.IntegerField()

    class Meta:
        db_table = "newznab_rate_window"

    def __str__(self) -> str:
        return f"{self.requests} since {self.window_start:%H:%M}"
