"""The base records in the operator console: groups, nodes and the audit log.

Node tokens are issued on a page that shows the token once (never a flash
message: those travel in cookies). Nodes are disabled, never deleted. The
groups' "Plan ranges" page is added by the seeding app (seeding/admin.py).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from indexer.admin_tools import (
    ConsoleModelAdmin,
    LargeTableAdmin,
    confirm,
    confirm_set_disabled,
    confirmed,
)
from indexer.catalog import admin as _catalog_admin  # noqa: F401  (registers the catalog's pages)
from indexer.catalog import release_admin as _release_admin  # noqa: F401  (the releases' pages)

from . import services
from .models import AuditEntry, Group, Node


@admin.register(Group)
class GroupAdmin(ConsoleModelAdmin):
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


@admin.register(AuditEntry)
class AuditEntryAdmin(LargeTableAdmin):
    """The audit log: read-only; entries come from the services operators act through."""

    list_display = ("at", "actor", "action", "object_type", "count", "detail")
    list_filter = ("action", "object_type")
    search_fields = ("actor",)
    date_hierarchy = "at"
    readonly_fields = ("at", "user", "actor", "action", "object_type", "count", "detail")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class IssueTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="The node's name, e.g. seed-ams-1.")


@admin.register(Node)
class NodeAdmin(ConsoleModelAdmin):
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
            path("issue/", self.admin_site.admin_view(self.issue_view), name="indexer_node_issue"),
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
        return TemplateResponse(request, "admin/indexer/issue_token.html", context)

    def _show_tokens(
        self, request: HttpRequest, issued: list[tuple[Node, str]]
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": "Tokens issued",
            "issued": issued,
            "opts": self.model._meta,
        }
        response = TemplateResponse(request, "admin/indexer/token_issued.html", context)
        response["Cache-Control"] = "no-store"
        return response

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {**(extra_context or {}), "issue_url": "issue/"}
        return super().changelist_view(request, extra_context)

    @admin.action(
        description="Issue or rotate tokens (shown once; old tokens stop working)",
        permissions=["change"],
    )
    def issue_tokens(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        if not confirmed(self, request):
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

    @admin.action(description="Disable the selected nodes", permissions=["change"])
    def disable_nodes(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        return self._set_disabled(
            request, queryset, True, "Disable these nodes? Their calls get 401 until enabled."
        )

    @admin.action(description="Enable the selected nodes", permissions=["change"])
    def enable_nodes(self, request: HttpRequest, queryset: QuerySet[Node]) -> HttpResponse | None:
        return self._set_disabled(request, queryset, False, "Enable these nodes?")

    def _set_disabled(
        self, request: HttpRequest, queryset: QuerySet[Node], disabled: bool, question: str
    ) -> HttpResponse | None:
        return confirm_set_disabled(
            self,
            request,
            queryset,
            disabled,
            what="node",
            question=question,
            set_disabled=services.set_nodes_disabled,
        )
