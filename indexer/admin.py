"""Groups in the operator console."""

from __future__ import annotations

from django.contrib import admin

from .models import Group


@admin.register(Group)
class GroupAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "active",
        "priority",
        "created_at",
        "backfill_next_id",
        "backfill_until_id",
    )
    list_filter = ("active",)
    search_fields = ("name",)
    list_editable = ("active", "priority")
    show_full_result_count = False


from indexer.catalog import admin as catalog_admin  # noqa: E402, F401  (registers the catalog)
