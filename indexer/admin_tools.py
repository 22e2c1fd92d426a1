"""Small building blocks for admin pages that stay fast and ask before acting.

- `CappedCountPaginator`: counts at most CAP rows, so a changelist over a
  million ranges never waits on a full COUNT(*).
- `confirm`: an admin action's confirmation step (a page listing what will
  be touched, with an optional form); the action acts only on the POST back.
  `confirm_then` is the whole of a simple action: ask, then act on the ids.
- `LargeTableAdmin`: a changelist over a table too large to count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils.functional import cached_property

COUNT_CAP = 10_000


class CappedCountPaginator(Paginator):
    @cached_property
    def count(self) -> int:
        object_list: Any = self.object_list
        if isinstance(object_list, QuerySet):
            return object_list.order_by()[: COUNT_CAP + 1].count()
        return len(object_list)


def confirmed(request: HttpRequest) -> bool:
    return request.POST.get("confirmed") == "yes"


def confirm(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: QuerySet,
    *,
    title: str,
    question: str,
    form: forms.Form | None = None,
) -> TemplateResponse:
    """Render the confirmation page for the action being run."""
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
    if not confirmed(request):
        return confirm(modeladmin, request, queryset, title=title, question=question)
    modeladmin.message_user(request, act(queryset.values_list("id", flat=True)), messages.SUCCESS)
    return None


class LargeTableAdmin(admin.ModelAdmin):
    """A changelist over a table too large to count: a capped count, 100 rows a page."""

    show_full_result_count = False
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


class GroupNameFilter(InputFilter):
    title = "group (exact name)"
    parameter_name = "group_name"

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        value = self.value()
        if value:
            return queryset.filter(group__name=value.strip())
        return queryset
