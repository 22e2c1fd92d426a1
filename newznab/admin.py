"""API keys in the operator console: issued on a page that shows the key once,
rotated, disabled and enabled through list actions that need the change
permission; today's requests and grabs as annotated columns."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Now, TruncDate
from django.http import HttpRequest

from core.admin_credentials import CredentialAdmin
from core.columns import INT4_MAX

from . import services
from .models import ApiKey, ApiKeyDay


class IssueKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Who uses it, e.g. sonarr-home.")
    rate_limit = forms.IntegerField(
        min_value=0,
        max_value=INT4_MAX,  # its column's bound: a larger number was wrapped, or a 500
        required=False,
        help_text="Requests per minute; empty: the default.",
    )


def _today(column: str) -> Coalesce:
    days = ApiKeyDay.objects.filter(key=OuterRef("pk"), day=TruncDate(Now()))
    return Coalesce(Subquery(days.values(column)[:1]), Value(0))


@admin.register(ApiKey)
class ApiKeyAdmin(CredentialAdmin):
    list_display = (
        "name", "disabled", "rate_limit", "requests_today", "grabs_today", "created_at", "rotated_at",
    )  # fmt: skip
    readonly_fields = ("name", "disabled", "created_at", "rotated_at")
    actions = ("rotate_keys", "disable_keys", "enable_keys")
    show_full_result_count = False
    issue_form = IssueKeyForm
    issue_title, issued_title = "Issue an API key", "API keys issued"
    what, rows, secret, refusal = "API key", "keys", "key", "error 101"
    rotate_question = "Rotate these keys? Their current keys stop working at once."

    def get_queryset(self, request: HttpRequest) -> QuerySet[ApiKey]:
        return (
            super()
            .get_queryset(request)
            .annotate(requests_today=_today("requests"), grabs_today=_today("grabs"))
        )

    @admin.display(description="requests today", ordering="requests_today")
    def requests_today(self, obj: Any) -> int:
        return int(obj.requests_today)

    @admin.display(description="grabs today", ordering="grabs_today")
    def grabs_today(self, obj: Any) -> int:
        return int(obj.grabs_today)

    def issue(self, request: HttpRequest, data: dict[str, Any]) -> tuple[ApiKey, str, str]:
        api_key, key = services.issue_api_key(
            data["name"], rate_limit=data["rate_limit"], actor=request.user
        )
        return api_key, key, f"Issued 1 key ({api_key.name})."

    def rotate(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> list[tuple[ApiKey, str]]:
        return services.rotate_api_keys(queryset.values_list("id", flat=True), actor=request.user)

    def set_disabled(self, ids: Any, disabled: bool, *, actor: Any) -> int:
        return services.set_api_keys_disabled(ids, disabled, actor=actor)

    def issued_context(self, request: HttpRequest) -> dict[str, Any]:
        return {"base_url": request.build_absolute_uri("/")}
