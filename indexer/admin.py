"""Groups in the operator console, and the "Plan ranges" page.

Planning is two steps: the form's first submit runs the plan as a dry run and
shows the summary; confirming runs it again for real, under the planning lock,
so whatever another planner inserted in between is not planned twice.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from indexer.admin_tools import CappedCountPaginator
from indexer.api.errors import ApiError
from indexer.nntp import NNTPError
from seeding.planning import plan_ranges

from .models import AuditEntry, Group


class PlanRangesForm(forms.Form):
    groups = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        widget=forms.SelectMultiple(attrs={"size": 12}),
        help_text="The groups whose history to plan.",
    )
    days = forms.FloatField(
        required=False, min_value=0, help_text="Only the last N days; empty: all the server has."
    )
    size = forms.IntegerField(min_value=1, help_text="Articles per range at most.")
    priority = forms.IntegerField(
        min_value=-(2**31), max_value=2**31 - 1, help_text="A lower number is more urgent."
    )


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
    actions = ("plan_selected",)

    def get_urls(self) -> list[Any]:
        return [
            path("plan/", self.admin_site.admin_view(self.plan_view), name="indexer_group_plan"),
            *super().get_urls(),
        ]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {**(extra_context or {}), "plan_url": reverse("admin:indexer_group_plan")}
        return super().changelist_view(request, extra_context)

    @admin.action(description="Plan ranges for the selected groups")
    def plan_selected(self, request: HttpRequest, queryset: QuerySet[Group]) -> HttpResponse:
        ids = ",".join(str(pk) for pk in queryset.values_list("id", flat=True))
        return HttpResponseRedirect(f"{reverse('admin:indexer_group_plan')}?ids={ids}")

    def plan_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        summary = None
        if request.method == "POST":
            form = PlanRangesForm(request.POST)
            if form.is_valid():
                data = form.cleaned_data
                commit = request.POST.get("confirmed") == "yes"
                try:
                    summary = plan_ranges(
                        list(data["groups"]),
                        data["days"],
                        data["size"],
                        data["priority"],
                        dry_run=not commit,
                        actor=request.user,
                    )
                except (ApiError, NNTPError) as exc:
                    detail = exc.detail if isinstance(exc, ApiError) else str(exc)
                    self.message_user(request, f"Nothing was planned: {detail}", messages.ERROR)
                    summary = None
                else:
                    if commit:
                        self.message_user(
                            request,
                            f"Planned {summary.ranges:,} ranges ({summary.articles:,} articles) "
                            f"for {len(summary.groups)} group(s).",
                            messages.SUCCESS,
                        )
                        return HttpResponseRedirect(reverse("admin:seeding_seedrange_changelist"))
        else:
            ids = [int(i) for i in request.GET.get("ids", "").split(",") if i.isdigit()]
            form = PlanRangesForm(
                initial={
                    "groups": ids,
                    "size": settings.PLAN_RANGE_SIZE,
                    "priority": settings.DEFAULT_PRIORITY,
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "title": "Plan ranges",
            "form": form,
            "summary": summary,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/indexer/group/plan_ranges.html", context)


@admin.register(AuditEntry)
class AuditEntryAdmin(admin.ModelAdmin):
    """The audit log: read-only; entries come from the services operators act through."""

    list_display = ("at", "actor", "action", "object_type", "count", "detail")
    list_filter = ("action", "object_type")
    search_fields = ("actor",)
    date_hierarchy = "at"
    show_full_result_count = False
    paginator = CappedCountPaginator
    list_per_page = 100
    readonly_fields = ("at", "user", "actor", "action", "object_type", "count", "detail")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


from indexer.catalog import admin as catalog_admin  # noqa: E402, F401  (registers the catalog)
