"""Operator console for nodes and seed ranges.

Actions filter to the rows they may touch, ask for confirmation, call one
service and report a count. Token issuing answers with a page that shows the
token once (never a flash message: those travel in cookies).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from indexer.admin_tools import CappedCountPaginator, GroupNameFilter, confirm, confirmed

from . import services
from .limits import MAX_BIGINT
from .models import Node, RangeStatus, SeedRange


class IssueTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="The node's name, e.g. seed-ams-1.")


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = ("name", "disabled", "last_seen_at", "created_at")
    list_filter = ("disabled",)
    search_fields = ("name",)
    readonly_fields = ("name", "last_seen_at", "created_at")
    exclude = ("token_hash",)
    actions = ("issue_tokens", "disable_nodes", "enable_nodes")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # nodes are created by issuing a token (the page below)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # ranges and audit entries name their node: disable it instead

    def get_urls(self) -> list[Any]:
        return [
            path("issue/", self.admin_site.admin_view(self.issue_view), name="seeding_node_issue"),
            *super().get_urls(),
        ]

    def issue_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        form = IssueTokenForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            node, token, _created = services.issue_token(
                form.cleaned_data["name"], actor=request.user
            )
            verb = "Issued" if _created else "Rotated"
            self.message_user(request, f"{verb} 1 token ({node.name}).", messages.SUCCESS)
            return self._show_tokens(request, [(node, token)])
        context = {
            **self.admin_site.each_context(request),
            "title": "Issue a node token",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/seeding/issue_token.html", context)

    def _show_tokens(
        self, request: HttpRequest, issued: list[tuple[Node, str]]
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": "Tokens issued",
            "issued": issued,
            "opts": self.model._meta,
        }
        response = TemplateResponse(request, "admin/seeding/token_issued.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {**(extra_context or {}), "issue_url": "issue/"}
        return super().changelist_view(request, extra_context)

    @admin.action(description="Issue or rotate tokens (shown once; old tokens stop working)")
    def issue_tokens(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        if not confirmed(request):
            return confirm(
                self,
                request,
                queryset,
                title="Rotate tokens",
                question="Rotate the tokens of these nodes? Their current tokens stop working at once.",
            )
        issued = [services.issue_token(node.name, actor=request.user)[:2] for node in queryset]
        self.message_user(request, f"Rotated {len(issued)} token(s).", messages.SUCCESS)
        return self._show_tokens(request, issued)

    @admin.action(description="Disable the selected nodes")
    def disable_nodes(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        queryset = queryset.filter(disabled=False)
        if not confirmed(request):
            return confirm(
                self,
                request,
                queryset,
                title="Disable nodes",
                question="Disable these nodes? Their calls get 401 until enabled.",
            )
        count = services.set_nodes_disabled(
            queryset.values_list("id", flat=True), True, actor=request.user
        )
        self.message_user(request, f"Disabled {count} node(s).", messages.SUCCESS)
        return None

    @admin.action(description="Enable the selected nodes")
    def enable_nodes(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        queryset = queryset.filter(disabled=True)
        if not confirmed(request):
            return confirm(
                self, request, queryset, title="Enable nodes", question="Enable these nodes?"
            )
        count = services.set_nodes_disabled(
            queryset.values_list("id", flat=True), False, actor=request.user
        )
        self.message_user(request, f"Enabled {count} node(s).", messages.SUCCESS)
        return None


class PriorityForm(forms.Form):
    priority = forms.IntegerField(
        min_value=-(2**31),
        max_value=2**31 - 1,
        help_text="A lower number is more urgent (default 100).",
    )


@admin.register(SeedRange)
class SeedRangeAdmin(admin.ModelAdmin):
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
    show_full_result_count = False
    paginator = CappedCountPaginator
    list_per_page = 100
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

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[SeedRange], search_term: str
    ) -> tuple[QuerySet[SeedRange], bool]:
        """Search by range id through the primary key (the default casts id to text)."""
        term = search_term.strip()
        if not term:
            return queryset, False
        if term.isascii() and term.isdigit() and int(term) <= MAX_BIGINT:
            return queryset.filter(id=int(term)), False
        return queryset.none(), False

    @admin.action(description="Requeue the selected ranges (from their resume points)")
    def requeue(self, request: HttpRequest, queryset: QuerySet[SeedRange]) -> HttpResponse | None:
        queryset = queryset.exclude(status=RangeStatus.QUEUED)
        if not confirmed(request):
            return confirm(
                self,
                request,
                queryset,
                title="Requeue ranges",
                question="Queue these ranges again? Live leases on them are taken away.",
            )
        count = services.requeue_ranges(queryset.values_list("id", flat=True), actor=request.user)
        self.message_user(request, f"Requeued {count} range(s).", messages.SUCCESS)
        return None

    @admin.action(description="Mark the selected ranges failed")
    def mark_failed(
        self, request: HttpRequest, queryset: QuerySet[SeedRange]
    ) -> HttpResponse | None:
        queryset = queryset.filter(status__in=[RangeStatus.QUEUED, RangeStatus.LEASED])
        if not confirmed(request):
            return confirm(
                self,
                request,
                queryset,
                title="Mark ranges failed",
                question="Mark these ranges failed? Nodes stop getting them.",
            )
        count = services.fail_ranges(
            queryset.values_list("id", flat=True),
            reason=f"marked failed by {request.user}",
            actor=request.user,
        )
        self.message_user(request, f"Marked {count} range(s) failed.", messages.SUCCESS)
        return None

    @admin.action(description="Change the priority of the selected ranges")
    def change_priority(
        self, request: HttpRequest, queryset: QuerySet[SeedRange]
    ) -> HttpResponse | None:
        form = PriorityForm(request.POST if confirmed(request) else None)
        if not (confirmed(request) and form.is_valid()):
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
