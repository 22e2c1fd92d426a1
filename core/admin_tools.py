"""Small building blocks for admin pages that stay fast and ask before acting.

- `CappedCountPaginator`: counts at most CAP rows, so a changelist over a
  million ranges never waits on a full COUNT(*).
- `confirm`: an admin action's confirmation step (a page listing what will
  be touched, with an optional form); the action acts only on the POST back.
  `confirm_then` is the whole of a simple action: ask, then act on the ids.
  Both check the permissions the running action declares
  (`@admin.action(permissions=[...])`) on the confirmation page and again on
  the confirming POST (`check_action_permission`); an action that declares
  none is refused, so a new action cannot forget.
- `RefusedInput`, `refused_page`: a query parameter the page cannot read is a
  400 page saying why (a list filter raises RefusedInput; ConsoleModelAdmin
  answers it), never a 500 and never the list as if unfiltered. `nul_parameter`
  names a parameter holding a NUL, which the console's admin site answers so
  on every page (PostgreSQL's text cannot hold one).
- `LargeTableAdmin`: a changelist over a table too large to count (nor its filters' facets).
- `NzbDownloads`: admin pages that download an NZB.
- `human_size`: a size as the admin shows one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.template.defaultfilters import filesizeformat
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.safestring import SafeString

from core.counts import capped_count
from core.errors import NotFound
from usenet.limits import MAX_BIGINT
from usenet.numbers import NotANumber, whole_number


class CappedCountPaginator(Paginator):
    @cached_property
    def count(self) -> int:
        object_list: Any = self.object_list
        if isinstance(object_list, QuerySet):
            return capped_count(object_list)
        return len(object_list)


def check_action_permission(modeladmin: admin.ModelAdmin, request: HttpRequest) -> None:
    """Refuse (403) unless the user holds every permission the running action declares.

    Django already hides and refuses an action whose `permissions` the user
    lacks; this repeats the check inside the action, on both of its steps,
    and refuses an action that declares no permissions at all.
    """
    name = request.POST.get("action", "")
    found = modeladmin.get_action(name) if name else None
    declared = getattr(found[0], "allowed_permissions", None) if found else None
    if not declared:
        raise PermissionDenied(f"The admin action {name!r} declares no permissions.")
    for permission in declared:
        if not getattr(modeladmin, f"has_{permission}_permission")(request):
            raise PermissionDenied(f"The action {name!r} needs the {permission} permission.")


def confirmed(modeladmin: admin.ModelAdmin, request: HttpRequest) -> bool:
    """True on the confirming POST, once the action's permissions are checked again."""
    if request.POST.get("confirmed") != "yes":
        return False
    check_action_permission(modeladmin, request)
    return True


def confirm(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    title: str,
    question: str,
    form: forms.Form | None = None,
) -> TemplateResponse:
    """Render the confirmation page for the action being run (if the user may run it)."""
    check_action_permission(modeladmin, request)
    opts = modeladmin.model._meta
    count = queryset.count()
    context = {
        **modeladmin.admin_site.each_context(request),
        "title": title,
        "question": question,
        "opts": opts,
        "count": count,
        "objects": list(queryset[:20]),
        "more": max(count - 20, 0),
        "form": form,
        "action": request.POST.get("action", ""),
        "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME),
        "select_across": request.POST.get("select_across", "0"),
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
    }
    return TemplateResponse(request, "admin/confirm_action.html", context)


def confirm_then(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    act: Callable[[Iterable[int]], str],
    *,
    title: str,
    question: str,
) -> TemplateResponse | None:
    """Ask first; once confirmed, `act` on the selected ids and show what it says it did."""
    if not confirmed(modeladmin, request):
        return confirm(modeladmin, request, queryset, title=title, question=question)
    modeladmin.message_user(request, act(queryset.values_list("id", flat=True)), messages.SUCCESS)
    return None


def confirm_set_disabled(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    disabled: bool,
    *,
    what: str,
    question: str,
    set_disabled: Callable[..., int],
) -> TemplateResponse | None:
    """Disable or enable the selected rows (nodes, API keys) after asking:
    `set_disabled(ids, disabled, actor=...)` is the service that does it."""
    verb = "Disable" if disabled else "Enable"

    def act(ids: Iterable[int]) -> str:
        count = set_disabled(ids, disabled, actor=request.user)
        return f"{verb}d {count} {what}(s)."

    return confirm_then(
        modeladmin,
        request,
        queryset.filter(disabled=not disabled),
        act,
        title=f"{verb} {what}s",
        question=question,
    )


class RefusedInput(Exception):
    """A query parameter an admin page cannot read; the sentence says what would do."""

    def __init__(self, sentence: str) -> None:
        super().__init__(sentence)
        self.sentence = sentence


def refused_page(
    admin_site: admin.AdminSite, request: HttpRequest, sentence: str, back: str, back_label: str
) -> TemplateResponse:
    """A 400 admin page with the sentence and a way back."""
    context = {
        **admin_site.each_context(request),
        "title": "The address cannot be read",
        "sentence": sentence,
        "back": back,
        "back_label": back_label,
    }
    return TemplateResponse(request, "admin/refused.html", context, status=400)


def nul_parameter(request: HttpRequest) -> str | None:
    """The first query parameter (or, on a POST, form field) whose name or value
    holds a NUL character, or None."""
    fields = [request.GET] if request.method == "GET" else [request.GET, request.POST]
    for params in fields:
        for name, values in params.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                return name.replace("\x00", "\\x00")
    return None


class ConsoleModelAdmin(admin.ModelAdmin):
    """The console's base ModelAdmin: naming an action the user may not run is a 403.

    Django leaves such an action out of the list and, on a POST naming it,
    renders the list again (or redirects with "No action selected"); a clear
    403 says what happened and cannot be mistaken for success.
    """

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if request.method == "POST" and "action" in request.POST:
            name = request.POST.get("action", "")
            offered = self.get_actions(request)
            if self.get_action(name) is not None and name not in offered:
                raise PermissionDenied(f"You may not run the action {name!r}.")
        try:
            return super().changelist_view(request, extra_context)
        except RefusedInput as refused:  # a list filter's value it cannot read
            back = request.path
            return refused_page(self.admin_site, request, refused.sentence, back, "The whole list")


class LargeTableAdmin(ConsoleModelAdmin):
    """A changelist over a table too large to count: a capped count, 100 rows a page, and
    no facets (`?_facets=1` would count every choice of every filter over the whole table)."""

    show_full_result_count = False
    show_facets = admin.ShowFacets.NEVER
    paginator = CappedCountPaginator
    list_per_page = 100


class InputFilter(admin.SimpleListFilter):
    """A list filter with a text box, for columns with too many values to list."""

    template = "admin/input_filter.html"

    def lookups(self, request: HttpRequest, model_admin: admin.ModelAdmin) -> list[tuple[str, str]]:
        return [("", "")]  # the filter is shown; its choices are typed, not listed

    def choices(self, changelist: Any) -> Any:
        # The text box keeps the other active filters as hidden fields.
        all_choice = next(iter(super().choices(changelist)))
        all_choice["query_parts"] = (  # type: ignore[typeddict-unknown-key]
            (key, value)
            for key, value in changelist.get_filters_params().items()
            if key != self.parameter_name
        )
        yield all_choice

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = (self.value() or "").strip()
        return self.filtered(queryset, value) if value else queryset

    def filtered(self, queryset: QuerySet, value: str) -> QuerySet:
        """The rows the typed `value` (stripped, never empty) selects."""
        raise NotImplementedError


class GroupNameFilter(InputFilter):
    title = "group (exact name)"
    parameter_name = "group_name"

    def filtered(self, queryset: QuerySet, value: str) -> QuerySet:
        return queryset.filter(group__name=value)


class NzbDownloads(admin.ModelAdmin):
    """Admin pages that download an NZB: `nzb_downloads` maps a route (with
    <int:pk>) to its URL name and the function of the id that answers it.
    They need the view permission; a row gone since the page was drawn is a 404."""

    nzb_downloads: ClassVar[dict[str, tuple[str, Callable[[int], HttpResponseBase]]]] = {}

    def get_urls(self) -> list[Any]:
        downloads = [
            path(route, self.admin_site.admin_view(partial(self.download_nzb, answer)), name=name)
            for route, (name, answer) in self.nzb_downloads.items()
        ]
        return [*downloads, *super().get_urls()]

    def download_nzb(
        self, answer: Callable[[int], HttpResponseBase], request: HttpRequest, pk: int
    ) -> HttpResponseBase:
        if not self.has_view_permission(request):
            return HttpResponse(status=403)
        try:
            return answer(pk)
        except NotFound as error:  # deleted or pruned since the page was drawn
            raise Http404(error.detail) from None


def human_size(size: int) -> SafeString:
    """A size as the admin shows one: 3.3 MB (Django's filesizeformat, as the dashboard's
    totals), with the exact bytes in its tooltip."""
    return format_html('<span title="{} bytes">{}</span>', f"{size:,}", filesizeformat(size))


class SearchById:
    """A ModelAdmin mixin: the search box finds a row by its whole-number id, through
    the primary key (Django's default casts id to text and scans)."""

    def get_search_results(
        self, request: HttpRequest, queryset: QuerySet[Any], search_term: str
    ) -> tuple[QuerySet[Any], bool]:
        term = search_term.strip()
        if not term:
            return queryset, False
        try:
            return queryset.filter(id=whole_number(term, high=MAX_BIGINT)), False
        except NotANumber:
            return queryset.none(), False
