"""The base records: newsgroups, seed nodes (with their token digests) and the audit log."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from core import columns
from usenet.groups import MAX_GROUP_NAME, group_name_problem


def validate_group_name(name: str) -> None:
    """RFC 3977's newsgroup names only (usenet/groups.py): the name goes into GROUP."""
    problem = group_name_problem(name)
    if problem is not None:
        raise ValidationError(problem, code="invalid_group_name")


class Group(models.Model):
    name = models.CharField(
        max_length=MAX_GROUP_NAME, unique=True, validators=[validate_group_name]
    )
    active = models.BooleanField(default=True)
    # A lower number is more urgent (the same convention as seed ranges).
    priority = columns.IntegerField(default=100)
    # Where live indexing began: history planning stops at the article
    # posted at this time.
    created_at = models.DateTimeField(auto_now_add=True)
    # While a backfill runs it walks down from backfill_next_id towards
    # backfill_until_id; planning takes over the rest.
    backfill_next_id = columns.BigIntegerField(null=True, blank=True)
    backfill_until_id = columns.BigIntegerField(null=True, blank=True)

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


class Node(models.Model):
    name = models.CharField(max_length=100, unique=True)
    # SHA-256 hex of the bearer token; the token itself is never stored.
    token_hash = models.CharField(max_length=64, unique=True)
    disabled = models.BooleanField(default=False)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "seed_node"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class SqlKept(models.Model):
    """A table only SQL writes and reads (triggers, maintenance statements); the
    model declares it for migrations. A row names itself by its table and id."""

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self._meta.db_table} {self.pk}"


def unique_key(table: str, *fields: str) -> models.UniqueConstraint:
    """A table's natural key (its rows are upserted on it), named `<table>_key`."""
    return models.UniqueConstraint(fields=list(fields), name=f"{table}_key")


def optional_reference(to: Any, related_name: str, **kwargs: Any) -> models.ForeignKey[Any]:
    """A nullable reference with no index of its own (the tables' partial
    indexes serve their queries); SET_NULL unless `on_delete` says otherwise."""
    kwargs.setdefault("on_delete", models.SET_NULL)
    return models.ForeignKey(
        to, null=True, blank=True, related_name=related_name, db_index=False, **kwargs
    )


def holder_reference(related_name: str, **kwargs: Any) -> models.ForeignKey[Node | None]:
    """The node holding a lease (a range's, a lane's); null when none does. Nodes
    are disabled, never deleted, so SET_NULL only matters to a manual delete."""
    return optional_reference(Node, related_name, **kwargs)


class AuditAction(models.TextChoices):
    PLANNED = "planned"
    REQUEUED = "requeued"
    FAILED = "failed"
    REPRIORITIZED = "reprioritized"
    TOKEN_ISSUED = "token issued"  # noqa: S105  (an action name)
    TOKEN_ROTATED = "token rotated"  # noqa: S105
    NODES_DISABLED = "nodes disabled"
    NODES_ENABLED = "nodes enabled"
    LEASE_FORCE_RELEASED = "lease force-released"
    RULE_SET_PUBLISHED = "rule set published"
    CATALOG_PRUNED = "catalog pruned"
    FILES_DELETED = "files deleted"
    API_KEYS_DISABLED = "api keys disabled"
    API_KEYS_ENABLED = "api keys enabled"


class AuditEntry(models.Model):
    """One operator action: who, when, what, on how many rows.

    Written only by `indexer.services.record_audit`, called by the services
    the admin and the commands call; never changed afterwards. `actor` keeps
    the name even if the user is deleted later; an action from the command
    line has no user and the actor "manage.py".
    """

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor = models.CharField(max_length=150)
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    object_type = models.CharField(max_length=32)
    count = columns.BigIntegerField(default=0)
    detail = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "audit_entry"
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.action} {self.count} {self.object_type}"
