"""API keys in the operator console: issued on a page that shows the key once,
rotated, disabled and enabled through list actions that need the change
permission; today's requests and grabs as annotated columns."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Now, TruncDate
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from indexer.admin_tools import (
    ConsoleModelAdmin,
    confirm,
    confirm_set_disabled,
    confirmed,
)
from indexer.errors import DomainError

from . import services
from .models import ApiKey, ApiKeyDay


class IssueKeyForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="Who uses it, e.g. sonarr-home.")
    rate_limit = forms.IntegerField(
        min_value=0, required=False, help_text="Requests per minute; empty: the default."
    )


def _today(column: str) -> Coalesce:
    days = ApiKeyDay.objects.filter(key=OuterRef("pk"), day=TruncDate(Now()))
    return Coalesce(Subquery(days.values(column)[:1]), Value(0))


@admin.register(ApiKey)
class ApiKeyAdmin(ConsoleModelAdmin):
    list_display = (
        "name", "disabled", "rate_limit", "requests_today", "grabs_today", "created_at", "rotated_at",
    )  # fmt: skip
    list_filter = ("disabled",)
    search_fields = ("name",)
    readonly_fields = ("name", "disabled", "created_at", "rotated_at")
    exclude = ("key_hash",)
    actions = ("rotate_keys", "disable_keys", "enable_keys")
    show_full_result_count = False

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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # keys are made on the issue page, which shows the key once

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the day counts name the key: disable it instead

    def get_urls(self) -> list[Any]:
        issue = self.admin_site.admin_view(self.issue_view)
        return [path("issue/", issue, name="newznab_apikey_issue"), *super().get_urls()]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {**(extra_context or {}), "issue_url": "issue/"}
        return super().changelist_view(request, extra_context)

    def issue_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        form = IssueKeyForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                api_key, key = services.issue_api_key(
                    form.cleaned_data["name"],
                    rate_limit=form.cleaned_data["rate_limit"],
                    actor=request.user,
                )
            except DomainError as error:
                form.add_error("name", error.detail)
            else:
                self.message_user(request, f"Issued 1 key ({api_key.name}).", messages.SUCCESS)
                return self._show_keys(request, [(api_key, key)])
        context = {
            **self.admin_site.each_context(request),
            "title": "Issue an API key",
            "form": form,
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/newznab/issue_key.html", context)

    def _show_keys(
        self, request: HttpRequest, issued: list[tuple[ApiKey, str]]
    ) -> TemplateResponse:
        context = {
            **self.admin_site.each_context(request),
            "title": "API keys issued",
            "issued": issued,
            "base_url": request.build_absolute_uri("/"),
            "opts": self.model._meta,
        }
        response = TemplateResponse(request, "admin/newznab/key_issued.html", context)
        response["Cache-Control"] = "no-store"
        return response

    @admin.action(
        description="Rotate the keys (shown once; old keys stop working)", permissions=["change"]
    )
    def rotate_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        if not confirmed(self, request):
            return confirm(
                self,
                request,
                queryset,
                title="Rotate API keys",
                question="Rotate these keys? Their current keys stop working at once.",
            )
        ids = queryset.values_list("id", flat=True)
        issued = services.rotate_api_keys(ids, actor=request.user)
        self.message_user(request, f"Rotated {len(issued)} key(s).", messages.SUCCESS)
        return self._show_keys(request, issued)

    @admin.action(description="Disable the selected keys", permissions=["change"])
    def disable_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._set_disabled(
            request, queryset, True, "Disable these keys? Their calls get error 101 until enabled."
        )

    @admin.action(description="Enable the selected keys", permissions=["change"])
    def enable_keys(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> HttpResponse | None:
        return self._set_disabled(request, queryset, False, "Enable these keys?")

    def _set_disabled(
        self, request: HttpRequest, queryset: QuerySet[ApiKey], disabled: bool, question: str
    ) -> HttpResponse | None:
        return confirm_set_disabled(
            self,
            request,
            queryset,
            disabled,
            what="API key",
            question=question,
            set_disabled=services.set_api_keys_disabled,
        )
