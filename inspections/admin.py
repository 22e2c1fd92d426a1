"""Operator console for inspections: the rows listed, and requeue / fail actions
(the range list's actions, seeding/admin.py, on this table; each checks the
change permission and asks first)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from core.admin_tools import LargeTableAdmin, SearchById
from seeding.admin import RangeMove

from . import services
from .models import Inspection, InspectionStatus

MOVES = (
    RangeMove(
        "requeue",
        (InspectionStatus.LEASED, InspectionStatus.DONE, InspectionStatus.FAILED),
        lambda ids, user: services.requeue_inspections(ids, actor=user),
        "Requeue the selected inspections (attempts reset)",
        "Queue these inspections again? Live leases on them are taken away.",
        "Requeued {} inspection(s).",
    ),
    RangeMove(
        "mark_failed",
        (InspectionStatus.QUEUED, InspectionStatus.LEASED),
        lambda ids, user: services.fail_inspections(
            ids, reason=f"marked failed by {user}", actor=user
        ),
        "Mark the selected inspections failed",
        "Mark these inspections failed? Nodes stop getting them.",
        "Marked {} inspection(s) failed.",
    ),
)


@admin.register(Inspection)
class InspectionAdmin(SearchById, LargeTableAdmin):
    list_display = (
        "id",
        "release",
        "status",
        "node",
        "attempts",
        "error",
        "posted",
        "heartbeat_at",
        "done_at",
    )
    list_filter = ("status", "node")
    list_select_related = ("release", "node")
    ordering = ("-id",)
    raw_id_fields = ("release", "group", "node")
    readonly_fields = (
        "epoch",
        "articles",
        "leased_at",
        "heartbeat_at",
        "attempts",
        "uncounted_releases",
        "done_at",
        "planned_at",
        "planned_segments",
        "outcome",
        "created_at",
    )
    search_fields = ("=id",)
    actions = ("requeue", "mark_failed")

    # Rows change only through the protocol and the actions (which fence live
    # leases); planning adds them, and they go with their release.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request)

    requeue, mark_failed = (move.action() for move in MOVES)
