"""The base records in the operator console: groups, nodes and the audit log.

Node tokens are issued on a page that shows the token once (never a flash
message: those travel in cookies). Nodes are disabled, never deleted. The
groups' "Plan ranges" page is added by the seeding app (seeding/admin.py).
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from core.admin_credentials import CredentialAdmin
from core.admin_tools import ConsoleModelAdmin, LargeTableAdmin

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
class NodeAdmin(CredentialAdmin):
    list_display = ("name", "disabled", "last_seen_at", "created_at")
    # `disabled` changes only through the list's actions: the service ends a
    # disabled node's leases and writes the audit entry, a saved form would not.
    readonly_fields = ("name", "disabled", "last_seen_at", "created_at")
    actions = ("issue_tokens", "disable_nodes", "enable_nodes")
    issue_form = IssueTokenForm
    issue_title, issued_title = "Issue a node token", "Tokens issued"
    what, rows, secret, refusal = "node", "nodes", "token", "401"
    rotate_question = "Rotate the tokens of these nodes? Their current tokens stop working at once."

    def issue(self, request: HttpRequest, data: dict[str, Any]) -> tuple[Node, str, str]:
        node, token, created = services.issue_token(data["name"], actor=request.user)
        return node, token, f"{'Issued' if created else 'Rotated'} 1 token ({node.name})."

    def rotate(self, request: HttpRequest, queryset: QuerySet[Node]) -> list[tuple[Node, str]]:
        return [services.issue_token(node.name, actor=request.user)[:2] for node in queryset]

    def set_disabled(self, ids: Any, disabled: bool, *, actor: Any) -> int:
        return services.set_nodes_disabled(ids, disabled, actor=actor)
