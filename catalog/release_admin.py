"""Releases in the operator console: a list to search and filter, each with its files.

The list reads only the release rows (never counts past COUNT_CAP): the
columns it shows are kept on the release. Filters: category (a newznab
parent includes its children), group (exact name, the groups GIN index),
completion and age. A release's page lists its files with their own
completion and links to the release's NZB, streamed.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import F, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.admin_tools import GroupNameFilter, LargeTableAdmin, NzbDownloads, RefusedInput
from usenet.categories import CATEGORIES
from usenet.numbers import NotANumber, whole_number

from . import selectors
from .api import release_nzb_response
from .models import Release
from .selectors import MAX_CATEGORY


class CategoryFilter(admin.SimpleListFilter):
    title = "category"
    parameter_name = "category"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(str(cat), f"{cat} {name}") for cat, name in CATEGORIES.items()]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        try:
            category = whole_number(value, high=MAX_CATEGORY)
        except NotANumber:
            raise RefusedInput(
                f"The category filter (?category=) takes one newznab id in ASCII digits 0-9, "
                f"such as 2000 or 5040, up to {MAX_CATEGORY}; choose one from the list."
            ) from None
        return queryset.filter(selectors.category_filter([category]))


class ReleaseGroupFilter(GroupNameFilter):
    def filtered(self, queryset: QuerySet, value: str) -> QuerySet:
        return queryset.filter(groups__contains=[value])


class CompletionFilter(admin.SimpleListFilter):
    title = "completion"
    parameter_name = "completion"
    CHOICES = {"100": 100, "90": 90, "50": 50}

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("100", "complete"), ("90", "90 % or more"), ("50", "50 % or more"),
                ("partial", "under 100 %")]  # fmt: skip

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value == "partial":
            return queryset.filter(segments_present__lt=F("segments_expected"))
        if value in self.CHOICES:
            wanted = self.CHOICES[value]
            return queryset.filter(segments_present__gte=F("segments_expected") * wanted / 100)
        return queryset


@admin.register(Release)
class ReleaseAdmin(NzbDownloads, LargeTableAdmin):
    list_display = ("name", "category_label", "poster", "posted", "files_label",
                    "completion_label", "size", "has_par2", "has_nfo", "nzb_link")  # fmt: skip
    list_filter = (CategoryFilter, ReleaseGroupFilter, CompletionFilter, "posted")
    search_fields = ("name",)
    search_help_text = "Part of the release name (case-insensitive)."
    ordering = ("-posted", "-id")
    fields = ("name", "category_label", "poster", "groups", "posted", "last_posted",
              "files_label", "completion_label", "size", "has_par2", "has_nfo",
              "category_version", "nzb_link", "file_table")  # fmt: skip
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # releases come from the files

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting its files (the catalog's list) removes a release

    @admin.display(description="category", ordering="category")
    def category_label(self, obj: Release) -> str:
        return f"{obj.category} {CATEGORIES.get(obj.category, '')}".strip()

    @admin.display(description="files")
    def files_label(self, obj: Release) -> str:
        expected = "?" if obj.files_expected is None else obj.files_expected
        return f"{obj.files_seen}/{expected}"

    @admin.display(description="completion")
    def completion_label(self, obj: Release) -> str:
        return f"{100 * obj.completion:.1f} %"

    @admin.display(description="NZB")
    def nzb_link(self, obj: Release) -> str:
        url = reverse("admin:catalog_release_nzb", args=[obj.pk])
        return format_html('<a href="{}">NZB</a>', url)

    @admin.display(description="files (name, group, segments, completion)")
    def file_table(self, obj: Release) -> str:
        rows = [
            (
                reverse("admin:catalog_catalogfile_change", args=[f["id"]]),
                f["name"],
                f["group"],
                f"{f['segments']}/{f['total']}",
                f"{100 * f['segments'] / f['total']:.1f} %" if f["total"] else "-",
            )
            for f in selectors.release_files(obj.pk)
        ]
        body = format_html_join(
            "",
            '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>',
            rows,
        )
        return format_html("<table>{}</table>", body)

    nzb_downloads = {"<int:pk>/nzb/": ("catalog_release_nzb", release_nzb_response)}
