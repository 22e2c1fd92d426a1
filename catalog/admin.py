"""The catalog and the rule sets in the operator console.

The file list never reads segment arrays (deferred), never counts past
COUNT_CAP and filters by group from the group table, so it stays fast on a
catalog of hundreds of millions of segments. Name search is Django's
icontains, i.e. upper(name) LIKE, which the trigram index serves when the
server has pg_trgm. Rule sets are only ever added: saving publishes a new
version through the service.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from catalog.rulesets import category_rules, current_rules
from core.admin_tools import (
    ConsoleModelAdmin,
    LargeTableAdmin,
    NzbDownloads,
    confirm,
    confirm_then,
    confirmed,
)
from core.errors import DomainError, NotFound

from . import release_admin as _release_admin  # noqa: F401  (registers the releases' pages)
from . import selectors, services
from .api import nzb_response
from .models import CatalogFile, RuleSetVersion

SEGMENTS_SHOWN = 500
NZB_EXPORT_LIMIT = 1000


class RuleSetForm(forms.ModelForm):
    rules = forms.JSONField(
        widget=forms.Textarea(attrs={"rows": 24, "cols": 100, "style": "font-family: monospace"}),
        help_text=(
            "The rule set as JSON: segment_counter, file_counters, strip, filename, "
            "poster_exclude, min_total, max_total (RE2 regular expressions). Saving "
            "publishes it as a new version; nodes and new leases pick it up within seconds."
        ),
    )

    categories = forms.JSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 16, "cols": 100, "style": "font-family: monospace"}),
        help_text=(
            "Category overrides as JSON: a list of rules tried in order before the "
            "category a release's parsed name gives, each "
            '{"category": newznab id, "name": [patterns all found in the name], '
            '"group": pattern found in a group}; no rule matches: the parsed name decides. '
            "Patterns are RE2 syntax, so that matching stays linear in the name whatever "
            "a poster writes: no lookaround, backreferences, atomic groups or possessive "
            "quantifiers, and a pattern RE2 refuses is shown with its reason. "
            "Empty keeps the ones in force. "
            "After publishing, "
            "manage.py recategorize applies them to the releases already stored."
        ),
    )

    class Meta:
        model = RuleSetVersion
        fields = ("rules", "categories", "note")

    def clean_rules(self) -> dict[str, Any]:
        try:
            return services.validated_rules(self.cleaned_data["rules"])
        except DomainError as error:
            raise forms.ValidationError(error.detail.removeprefix("rules: ")) from None

    def clean_categories(self) -> list[dict[str, Any]] | None:
        if self.cleaned_data["categories"] in (None, ""):
            return None
        try:
            return services.validated_categories(self.cleaned_data["categories"])
        except DomainError as error:
            raise forms.ValidationError(error.detail.removeprefix("categories: ")) from None


@admin.register(RuleSetVersion)
class RuleSetVersionAdmin(ConsoleModelAdmin):
    form = RuleSetForm
    list_display = ("version", "created_at", "created_by", "note", "in_force")
    readonly_fields = ("version", "created_at", "created_by")
    ordering = ("-version",)

    @admin.display(boolean=True, description="in force")
    def in_force(self, obj: RuleSetVersion) -> bool:
        return obj.version == current_rules().version

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # a version never changes: publish a new one

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # ranges and files name the version they were made under

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        rules = current_rules().to_dict()
        version = rules.pop("version")
        return {"rules": rules, "categories": category_rules(version).source}

    def save_model(
        self, request: HttpRequest, obj: RuleSetVersion, form: Any, change: bool
    ) -> None:
        published = services.publish_rules(
            form.cleaned_data["rules"],
            created_by=request.user.get_username(),
            note=form.cleaned_data.get("note", ""),
            categories=form.cleaned_data.get("categories"),
            actor=request.user,
        )
        obj.pk, obj.version, obj.created_at = published.pk, published.version, published.created_at
        obj.created_by = published.created_by


def file_nzb(file_id: int) -> HttpResponseBase:
    return nzb_response(*selectors.file_nzb(file_id))


def file_release_nzb(file_id: int) -> HttpResponseBase:
    return nzb_response(*selectors.release_nzb(file_id))


@admin.register(CatalogFile)
class CatalogFileAdmin(NzbDownloads, LargeTableAdmin):
    list_display = (
        "id",
        "name",
        "group",
        "poster",
        "date",
        "segment_count",
        "bytes",
        "complete",
        "conflicts",
        "nzb_links",
    )
    list_filter = (("group", admin.RelatedFieldListFilter), "complete", "date")
    search_fields = ("name",)
    search_help_text = "Part of the file name (case-insensitive)."
    list_select_related = ("group",)
    ordering = ("-id",)
    actions = ("export_nzb", "delete_files")
    fields = (
        "name",
        "group",
        "subject",
        "poster",
        "date",
        "total",
        "segment_count",
        "bytes",
        "complete",
        "conflicts",
        "file_index",
        "file_count",
        "rule_version",
        "created_at",
        "updated_at",
        "nzb_links",
        "segment_table",
    )
    readonly_fields = fields

    def get_queryset(self, request: HttpRequest) -> QuerySet[CatalogFile]:
        queryset = super().get_queryset(request)
        url_name = request.resolver_match.url_name if request.resolver_match else None
        if url_name and url_name.endswith("changelist"):
            queryset = queryset.defer(*selectors.SEGMENT_FIELDS, "key", "release_key")
        return queryset

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # delete_files says what it removed, in one query
        return actions

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # files come from nodes

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description="segments", ordering="segments")
    def segment_count(self, obj: CatalogFile) -> str:
        return f"{obj.segments}/{obj.total}"

    @admin.display(description="NZB")
    def nzb_links(self, obj: CatalogFile) -> str:
        file_url = reverse("admin:catalog_catalogfile_nzb", args=[obj.pk])
        if obj.file_count is None:
            return format_html('<a href="{}">NZB</a>', file_url)
        release_url = reverse("admin:catalog_catalogfile_release_nzb", args=[obj.pk])
        return format_html(
            '<a href="{}">NZB</a> · <a href="{}">release NZB</a>', file_url, release_url
        )

    @admin.display(description="segments (part, article, message-id, bytes)")
    def segment_table(self, obj: CatalogFile) -> str:
        rows = obj.segment_rows()[:SEGMENTS_SHOWN]
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>", rows)
        more = len(obj.parts) - len(rows)
        tail = format_html("<p>… and {} more</p>", more) if more > 0 else ""
        return format_html("<table>{}</table>{}", body, tail)

    nzb_downloads = {
        "<int:pk>/nzb/": ("catalog_catalogfile_nzb", file_nzb),
        "<int:pk>/release-nzb/": ("catalog_catalogfile_release_nzb", file_release_nzb),
    }

    @admin.action(description="Download the selected files as one NZB", permissions=["view"])
    def export_nzb(self, request: HttpRequest, queryset: QuerySet[CatalogFile]) -> Any:
        ids = list(queryset.order_by("-id").values_list("id", flat=True)[: NZB_EXPORT_LIMIT + 1])
        if len(ids) > NZB_EXPORT_LIMIT:
            self.message_user(
                request,
                f"Select at most {NZB_EXPORT_LIMIT} files for one NZB.",
                messages.WARNING,
            )
            return None
        if not confirmed(self, request):
            return confirm(
                self,
                request,
                queryset.defer(*selectors.SEGMENT_FIELDS),
                title="Download an NZB",
                question="Download these files as one NZB?",
            )
        try:
            response = nzb_response(*selectors.nzb_for(ids))
        except NotFound as error:  # the files went while the confirmation was open
            self.message_user(request, error.detail, messages.WARNING)
            return None
        # Shown on the next page the operator opens (the answer is the file).
        self.message_user(request, f"Exported {len(ids)} file(s) as one NZB.", messages.SUCCESS)
        return response

    @admin.action(description="Delete the selected files", permissions=["delete"])
    def delete_files(self, request: HttpRequest, queryset: QuerySet[CatalogFile]) -> Any:
        return confirm_then(
            self,
            request,
            queryset.defer(*selectors.SEGMENT_FIELDS),
            lambda ids: f"Deleted {services.delete_files(ids, actor=request.user)} file(s).",
            title="Delete catalog files",
            question="Delete these files from the catalog? Nodes re-report them only if "
            "their ranges are indexed again.",
        )
