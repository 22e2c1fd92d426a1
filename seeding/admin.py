"""Operator console for seed ranges, and the groups' "Plan ranges" page.

Actions filter to the rows they may touch, ask for confirmation, call one
service and report a count. Planning is two steps: the form's first submit
runs the plan as a dry run and shows the summary; confirming runs it again for
real, under the planning lock, so nothing another planner inserted in between
is planned twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.admin_tools import (
    GroupNameFilter,
    LargeTableAdmin,
    RefusedInput,
    SearchById,
    confirm,
    confirm_then,
    confirmed,
    refused_page,
)
from core.columns import INT4_MAX
from core.errors import DomainError
from indexer.admin import GroupAdmin
from indexer.models import Group
from usenet.limits import MAX_ARTICLE
from usenet.nntp import NNTPError
from usenet.numbers import NotANumber, whole_number

from . import services
from .models import RangeStatus, SeedRange
from .planning import plan_ranges

MAX_PLAN_DAYS = 36_525  # a hundred years: more than any news server keeps


class PlanRangesForm(forms.Form):
    groups = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        widget=forms.SelectMultiple(attrs={"size": 12}),
        help_text="The groups whose history to plan.",
    )
    days = forms.FloatField(
        required=False,
        min_value=0,
        max_value=MAX_PLAN_DAYS,  # past it the cut-off date is no date (a 500)
        help_text="Only the last N days; empty: all the server has.",
    )
    size = forms.IntegerField(
        min_value=1, max_value=MAX_ARTICLE, help_text="Articles per range at most."
    )
    priority = forms.IntegerField(
        min_value=-INT4_MAX - 1, max_value=INT4_MAX, help_text="A lower number is more urgent."
    )


def prefilled_plan_form(ids: str) -> PlanRangesForm:
    """The plan form with the groups of `?ids=3,7` selected; RefusedInput unless each is an id."""
    try:
        groups = [whole_number(part, low=1) for part in ids.split(",") if part.strip()]
    except NotANumber:
        raise RefusedInput(
            "The groups to plan (?ids=) are group ids in ASCII digits 0-9 separated by commas, "
            "such as ?ids=3,7. Select the groups in the groups' list and run "
            "“Plan ranges for the selected groups”, or open this page without ?ids=."
        ) from None
    initial = {"groups": groups, "size": settings.PLAN_RANGE_SIZE}
    return PlanRangesForm(initial={**initial, "priority": settings.DEFAULT_PRIORITY})


class PlanningGroupAdmin(GroupAdmin):
    """The groups' list with the planning page (planning lives in this app)."""

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

    @admin.action(description="Plan ranges for the selected groups", permissions=["change"])
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
                except (DomainError, NNTPError) as exc:
                    detail = exc.detail if isinstance(exc, DomainError) else str(exc)
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
            try:
                form = prefilled_plan_form(request.GET.get("ids", ""))
            except RefusedInput as refused:
                back = reverse("admin:indexer_group_changelist")
                return refused_page(self.admin_site, request, refused.sentence, back, "The groups")
        context = {
            **self.admin_site.each_context(request),
            "title": "Plan ranges",
            "form": form,
            "summary": summary,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/indexer/group/plan_ranges.html", context)


admin.site.unregister(Group)
admin.site.register(Group, PlanningGroupAdmin)


class PriorityForm(forms.Form):
    priority = forms.IntegerField(
        min_value=-INT4_MAX - 1,
        max_value=INT4_MAX,
        help_text="A lower number is more urgent (default 100).",
    )


@dataclass(frozen=True)
class RangeMove:
    """A list action on the selected rows in `states` (ranges, and the inspections'
    list uses it too): it asks first, then runs `service(ids, user)` and reports
    `done` with the count; its page's title is the description without "the
    selected" and what is in brackets."""

    name: str
    states: tuple[str, ...]
    service: Callable[[Iterable[int], Any], int]
    description: str
    question: str
    done: str  # "{}" stands for the count

    def action(self) -> Callable[[Any, HttpRequest, QuerySet[Any]], HttpResponse | None]:
        title = self.description.split(" (")[0].replace("the selected ", "")

        def act(modeladmin: Any, request: HttpRequest, queryset: QuerySet[Any]) -> Any:
            return confirm_then(
                modeladmin,
                request,
                queryset.filter(status__in=self.states),
                lambda ids: self.done.format(self.service(ids, request.user)),
                title=title,
                question=self.question,
            )

        act.__name__ = act.__qualname__ = self.name
        return admin.action(description=self.description, permissions=["change"])(act)


RANGE_MOVES = (
    RangeMove(
        "requeue",
        (RangeStatus.LEASED, RangeStatus.DONE, RangeStatus.FAILED),
        lambda ids, user: services.requeue_ranges(ids, actor=user),
        "Requeue the selected ranges (from their resume points)",
        "Queue these ranges again? Live leases on them are taken away.",
        "Requeued {} range(s).",
    ),
    RangeMove(
        "mark_failed",
        (RangeStatus.QUEUED, RangeStatus.LEASED),
        lambda ids, user: services.fail_ranges(ids, reason=f"marked failed by {user}", actor=user),
        "Mark the selected ranges failed",
        "Mark these ranges failed? Nodes stop getting them.",
        "Marked {} range(s) failed.",
    ),
)


@admin.register(SeedRange)
class SeedRangeAdmin(SearchById, LargeTableAdmin):
    list_display = (
        "id",
        "group",
        "start_id",
        "end_id",
        "next_id",
        "status",
        "priority",
        "node",
        "attempts",
        "headers",
        "files",
        "heartbeat_at",
    )
    list_filter = (
        "status",
        "capture",
        GroupNameFilter,
        "node",
    )
    list_select_related = ("group", "node")
    ordering = ("-id",)
    raw_id_fields = ("group", "node")
    readonly_fields = (
        "epoch",
        "leased_at",
        "heartbeat_at",
        "attempts",
        "headers",
        "files",
        "fragments",
        "done_at",
        "rule_version",
        "created_at",
    )
    search_fields = ("=id",)
    actions = ("requeue", "mark_failed", "change_priority")

    # Ranges change only through the protocol and the actions below (which
    # fence live leases); a form saving every column could move a resume
    # point back under a batch or hand a lease to another node unfenced.
    # Ranges are added by planning (under its lock).
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return obj is None and super().has_change_permission(request)

    requeue, mark_failed = (move.action() for move in RANGE_MOVES)

    @admin.action(description="Change the priority of the selected ranges", permissions=["change"])
    def change_priority(
        self, request: HttpRequest, queryset: QuerySet[SeedRange]
    ) -> HttpResponse | None:
        form = PriorityForm(request.POST if confirmed(self, request) else None)
        if not (confirmed(self, request) and form.is_valid()):
            return confirm(
                self,
                request,
                queryset,
                title="Change priority",
                question="Set the priority of these ranges:",
                form=form,
            )
        count = services.reprioritize_ranges(
            queryset.values_list("id", flat=True), form.cleaned_data["priority"], actor=request.user
        )
        self.message_user(request, f"Changed the priority of {count} range(s).", messages.SUCCESS)
        return None
