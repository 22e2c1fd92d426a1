"""Group leases in the operator console: who holds which lane, and a force release.

The list reads one row per lane with its group, holder and range joined
(`list_select_related`); snapshot age is computed from the row, not queried.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from core.admin_tools import LargeTableAdmin, confirm_then

from . import services
from .models import GroupLane


@admin.register(GroupLane)
class GroupLaneAdmin(LargeTableAdmin):
    list_display = (
        "group",
        "lane",
        "node",
        "epoch",
        "heartbeat_at",
        "range",
        "snapshot_next",
        "snapshot_age",
        "snapshot_size",
        "ranges_done",
        "headers",
        "planned_articles",
        "urgent_priority",
        "claimable_articles",
        "claimable_priority",
    )
    list_filter = ("lane", ("node", admin.RelatedOnlyFieldListFilter))
    list_select_related = ("group", "node", "range")
    search_fields = ("group__name",)
    ordering = ("group__name", "lane")
    readonly_fields = [f.name for f in GroupLane._meta.fields]
    actions = ("force_release",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # lanes come from planned ranges and leases

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    @admin.display(description="snapshot age")
    def snapshot_age(self, obj: GroupLane) -> str:
        if obj.snapshot_at is None:
            return "-"
        seconds = int((timezone.now() - obj.snapshot_at).total_seconds())
        return f"{seconds // 3600}h {seconds % 3600 // 60}m" if seconds >= 3600 else f"{seconds}s"

    @admin.action(
        description="Force-release the selected lanes (their holders are fenced)",
        permissions=["change"],
    )
    def force_release(
        self, request: HttpRequest, queryset: QuerySet[GroupLane]
    ) -> HttpResponse | None:
        return confirm_then(
            self,
            request,
            queryset.filter(node__isnull=False),
            lambda ids: (
                f"Released {services.force_release_lanes(ids, actor=request.user)} lane(s)."
            ),
            title="Force-release group leases",
            question=(
                "Take these lanes from their holders? Their range in work is queued again "
                "and their next call gets 409 lease_lost."
            ),
        )
