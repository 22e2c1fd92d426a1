"""Releases in the operator console: a list an operator can work from, each with its files.

The list reads only the release rows (never counts past COUNT_CAP): every
column is kept on the release (its totals by the triggers, its name's
fields by the parser). Columns: category, the parsed episode (S01E02,
S01E02-E03, S01 pack, absolute 13, daily 2011-04-12) or year, size, files
seen/expected, completion, groups, posted date. Filters: kind, resolution,
category (a newznab parent includes its children), group (exact name, the
groups GIN index), completion and age.

Sorting stays cheap on a catalog of ten million releases: by posted date
the page is read down the posted index; by any other column, the list is the
newest `sort_window` releases that match the filters (read down the same
index) sorted among themselves, and its title says so (docs/console.md, "The
release list"). A release's page lists its files with their own completion
and links to the release's NZB, streamed, and what inspection found (issue
26): the rule that named it and why, each result, the names refused; the
"Inspect again" action (its own permission, catalog.reinspect_release) queues
the selected releases through the inspections app's hook
(catalog.inspection.request_reinspection).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.db.models import ExpressionWrapper, F, FloatField, Func, QuerySet, Value
from django.db.models.functions import Coalesce, Least, NullIf
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.admin_tools import (
    GroupNameFilter,
    LargeTableAdmin,
    NzbDownloads,
    RefusedInput,
    confirm,
    confirmed,
    human_size,
)
from core.columns import column_bounds
from core.counts import COUNT_CAP
from core.errors import DomainError
from usenet.categories import CATEGORIES
from usenet.numbers import NotANumber, whole_number
from usenet.release_names import KINDS

from . import selectors
from .api import release_nzb_response
from .inspection import MAX_REINSPECT, request_reinspection
from .models import Release
from .selectors import MAX_CATEGORY

# The orderings an index reads in order (Release.Meta.indexes). A sort whose
# columns, tie-breakers aside, begin one of these is read down that index. Not
# the category index: under a filter that category and kind or resolution
# share (kind=tv), its walk would pass every release of the categories before.
INDEX_ORDERINGS: tuple[tuple[str, ...], ...] = (
    ("-posted", "-id"),  # catalog_release_posted_idx
    ("posted", "id"),  # the same, read backwards
)
GROUPS_SHOWN = 3
EPISODES_SHOWN = 4
FILES_SHOWN = 10  # of each inspection result, on the release's page
RESOLUTIONS = (2160, 1080, 720, 576, 480)  # the vertical resolutions names carry

# The episode column's sort: season, episode, absolute number, air date, year.
EPISODE_ORDER = Func(
    F("seasons"), F("episodes"), F("absolute_episodes"), F("air_date"), F("year"), function="ROW"
)
# The completion column's sort: the same 0..1 as Release.completion.
COMPLETION_ORDER = Coalesce(
    Least(
        ExpressionWrapper(
            F("segments_present") * 1.0 / NullIf(F("segments_expected"), 0),
            output_field=FloatField(),
        ),
        Value(1.0),
    ),
    Value(0.0),
)


def index_ordering(ordering: Sequence[Any]) -> tuple[str, ...] | None:
    """The ordering an index reads that `ordering` asks for; None if no index serves it."""
    if not all(isinstance(part, str) for part in ordering):
        return None  # an expression (completion, the episode column)
    named = ["-id" if part == "-pk" else "id" if part == "pk" else part for part in ordering]
    chosen = list(named)
    while chosen and chosen[-1].lstrip("-") == "id":
        chosen.pop()  # the tie-breaker: each index ends with id
    if not chosen:
        return tuple(named)  # the primary key alone
    return next((full for full in INDEX_ORDERINGS if full[: len(chosen)] == tuple(chosen)), None)


def episode_span(episodes: Sequence[int]) -> str:
    """E02, E02-E03 (consecutive), E02E05 (a few apart)."""
    ordered = sorted(episodes)
    if len(ordered) > 1 and ordered == list(range(ordered[0], ordered[-1] + 1)):
        return f"E{ordered[0]:02d}-E{ordered[-1]:02d}"
    shown = "".join(f"E{episode:02d}" for episode in ordered[:EPISODES_SHOWN])
    return shown + ("…" if len(ordered) > EPISODES_SHOWN else "")


def episode_label(release: Release) -> str:
    """What a release's name numbers: S01E02, S01E02-E03, S01 pack, absolute 13,
    daily 2011-04-12, or else its year; "-" if none of them."""
    seasons = sorted(release.seasons or [])
    if release.air_date is not None:
        return f"daily {release.air_date:%Y-%m-%d}"
    if seasons and release.episodes:
        return f"S{seasons[0]:02d}{episode_span(release.episodes)}"
    if seasons:
        span = f"S{seasons[0]:02d}" + (f"-S{seasons[-1]:02d}" if len(seasons) > 1 else "")
        return f"{span} pack" if release.full_season else span
    if release.absolute_episodes:
        numbers = sorted(release.absolute_episodes)
        last = f"-{numbers[-1]}" if len(numbers) > 1 else ""
        return f"absolute {numbers[0]}{last}"
    return str(release.year) if release.year is not None else "-"


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


class KindFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(kind, kind) for kind in KINDS]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        if value not in KINDS:
            raise RefusedInput(
                f"The kind filter (?kind=) takes one of {', '.join(KINDS)}; choose one from the list."
            )
        return queryset.filter(kind=value)


class ResolutionFilter(admin.SimpleListFilter):
    title = "resolution"
    parameter_name = "resolution"
    UNKNOWN = "unknown"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [*((str(lines), f"{lines}p") for lines in RESOLUTIONS), (self.UNKNOWN, "unknown")]

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if not value:
            return queryset
        if value == self.UNKNOWN:
            return queryset.filter(resolution__isnull=True)
        _low, high = column_bounds(Release._meta.get_field("resolution"))
        try:
            lines = whole_number(value, low=1, high=high)
        except NotANumber:
            raise RefusedInput(
                f"The resolution filter (?resolution=) takes a number of lines in ASCII "
                f"digits 0-9, such as 1080, up to {high}, or {self.UNKNOWN}; "
                "choose one from the list."
            ) from None
        return queryset.filter(resolution=lines)


class ReleaseChangeList(ChangeList):
    """The release list: a sort an index serves reads it; any other sorts only the newest
    `sort_window` releases that match (read down the posted index), and the title says so."""

    model_admin: ReleaseAdmin
    windowed = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.windowed:
            self.title = (
                f"Select release to view: the newest {self.model_admin.sort_window:,} "
                "that match, sorted"
            )

    def get_ordering(self, request: HttpRequest, queryset: QuerySet) -> list[Any]:
        ordering = super().get_ordering(request, queryset)
        indexed = index_ordering(ordering)
        self.windowed = indexed is None
        return ordering if indexed is None else list(indexed)

    def get_queryset(self, request: HttpRequest, exclude_parameters: Any = None) -> QuerySet:
        queryset = super().get_queryset(request, exclude_parameters)
        if not self.windowed:
            return queryset
        window = self.model_admin.sort_window
        newest = queryset.order_by("-posted", "-id").values("pk")[:window]
        return Release.objects.filter(pk__in=newest).order_by(*queryset.query.order_by)


@admin.register(Release)
class ReleaseAdmin(NzbDownloads, LargeTableAdmin):
    list_display = ("name", "category_label", "episode", "size_label", "files_label",
                    "completion_label", "groups_label", "posted", "poster", "has_par2",
                    "has_nfo", "nzb_link")  # fmt: skip
    list_filter = (KindFilter, ResolutionFilter, CategoryFilter, ReleaseGroupFilter,
                   CompletionFilter, "posted")  # fmt: skip
    search_fields = ("name",)
    search_help_text = "Part of the release name (case-insensitive)."
    ordering = ("-posted", "-id")
    # A sort no index serves orders this many of the newest matching releases.
    sort_window = COUNT_CAP
    fields = ("name", "posted_name", "category_label", "kind", "episode", "resolution_label",
              "source", "codec", "release_group", "poster", "groups", "posted", "last_posted",
              "files_label", "completion_label", "size_label", "has_par2", "has_nfo",
              "passworded", "encrypted", "imdb_id", "tvdb_id", "inspected_at",
              "inspection_panel", "category_version", "nzb_link", "file_table")  # fmt: skip
    readonly_fields = fields
    actions = ("reinspect",)

    def get_changelist(self, request: HttpRequest, **kwargs: Any) -> type[ChangeList]:
        return ReleaseChangeList

    def get_queryset(self, request: HttpRequest) -> QuerySet[Release]:
        # Unordered: the list's ordering is what the operator chose (or `ordering`)
        # and the primary key, which ReleaseChangeList matches to an index.
        return super().get_queryset(request).order_by()

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # releases come from the files

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # deleting its files (the catalog's list) removes a release

    @admin.display(description="category", ordering="category")
    def category_label(self, obj: Release) -> str:
        return f"{obj.category} {CATEGORIES.get(obj.category, '')}".strip()

    @admin.display(description="episode or year", ordering=EPISODE_ORDER)
    def episode(self, obj: Release) -> str:
        return episode_label(obj)

    @admin.display(description="resolution")
    def resolution_label(self, obj: Release) -> str:
        return "-" if obj.resolution is None else f"{obj.resolution}p"

    @admin.display(description="size", ordering="size")
    def size_label(self, obj: Release) -> SafeString:
        return human_size(obj.size)

    @admin.display(description="files", ordering="files_seen")
    def files_label(self, obj: Release) -> str:
        expected = "?" if obj.files_expected is None else obj.files_expected
        return f"{obj.files_seen}/{expected}"

    @admin.display(description="completion", ordering=COMPLETION_ORDER)
    def completion_label(self, obj: Release) -> str:
        return f"{100 * obj.completion:.1f} %"

    @admin.display(description="groups", ordering="groups")
    def groups_label(self, obj: Release) -> str:
        more = len(obj.groups) - GROUPS_SHOWN
        shown = ", ".join(obj.groups[:GROUPS_SHOWN])
        return f"{shown} (+{more})" if more > 0 else shown

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

    @admin.display(description="inspection")
    def inspection_panel(self, obj: Release) -> SafeString:
        return inspection_panel(obj.inspection)

    def has_reinspect_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("catalog.reinspect_release")

    @admin.action(description="Inspect the selected releases again", permissions=["reinspect"])
    def reinspect(self, request: HttpRequest, queryset: QuerySet[Release]) -> Any:
        if not confirmed(self, request):
            return confirm(
                self,
                request,
                queryset,
                title="Inspect releases again",
                question="Queue these releases for inspection again? A node reads their par2, "
                "nfo and first archive volume; a name found replaces the current one, and the "
                "poster's name is kept.",
            )
        try:
            # One past the limit is enough for request_reinspection to refuse a
            # selection that is too large; "select all" on 10M rows loads no more.
            ids = list(queryset.values_list("id", flat=True)[: MAX_REINSPECT + 1])
            queued = request_reinspection(ids, f"admin:{request.user.get_username()}")
        except DomainError as error:
            self.message_user(request, error.detail, messages.ERROR)
        else:
            self.message_user(
                request, f"{queued} releases queued for inspection.", messages.SUCCESS
            )
        return None

    nzb_downloads = {"<int:pk>/nzb/": ("catalog_release_nzb", release_nzb_response)}


def inspection_panel(summary: dict[str, Any] | None) -> SafeString:
    """What inspection found, as the release's page shows it: the rule and why, the
    names refused, how the files were matched, then each result and what was missing."""
    if not summary:
        return format_html("{}", "Not inspected.")
    results = format_html_join(
        "",
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        (
            (
                r.get("role"),
                r.get("format") or "-",
                ", ".join(f"{f['name']} ({f['size']})" for f in r.get("files", [])[:FILES_SHOWN])
                + (
                    f" … {r.get('file_count')} in all"
                    if r.get("file_count", 0) > FILES_SHOWN
                    else ""
                ),
                ", ".join(
                    map(
                        str,  # TVDB ids are kept as numbers
                        [
                            *r.get("imdb_ids", []),
                            *r.get("tvdb_ids", []),
                            *r.get("release_names", []),
                        ],
                    )
                )
                or "-",
                _flags(r),
                "; ".join([*r.get("notes", []), *(e["error"] for e in r.get("errors", []))]) or "-",
            )
            for r in summary.get("results", [])
        ),
    )
    refused = format_html_join(
        "",
        "<li>{} {}: {}</li>",
        ((c["source"], c["name"], c["refused"]) for c in summary.get("refused", [])),
    )
    missing = format_html_join(
        "",
        "<li>{} {}: {}</li>",
        ((m["role"], m["message_id"], m["error"]) for m in summary.get("missing", [])),
    )
    return format_html(
        "<p><b>Rule:</b> {} &mdash; {}</p><p><b>Files matched:</b> {} ({})</p>"
        "<table><tr><th>role</th><th>format</th><th>files</th><th>ids and names</th>"
        "<th>flags</th><th>notes and errors</th></tr>{}</table>"
        "<p><b>Names refused:</b></p><ul>{}</ul><p><b>Missing articles:</b></p><ul>{}</ul>",
        summary.get("rule", "-"),
        summary.get("why", ""),
        summary.get("matched_files", 0),
        summary.get("matching", ""),
        results,
        refused or format_html("<li>{}</li>", "none"),
        missing or format_html("<li>{}</li>", "none"),
    )


def _flags(result: dict[str, Any]) -> str:
    flags = ("passworded", "headers_encrypted", "solid", "volume", "complete")
    return ", ".join(f for f in flags if result.get(f)) or "-"
