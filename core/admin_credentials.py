"""One admin for anything that holds a secret: node tokens and newznab API keys.

The secret is shown once, on its own page (never in a flash message: those
travel in cookies); rows are rotated, disabled and enabled through list
actions that ask first and need the change permission; nothing is deleted.
A subclass names its words, titles and services; the base makes its three
list actions (named by `actions`: rotate, disable, enable), their texts, its
templates' names and the hidden `<secret>_hash` column from them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import path

from core.admin_tools import ConsoleModelAdmin, confirm, confirm_set_disabled, confirmed
from core.errors import DomainError

Issued = list[tuple[Any, str]]
Action = Callable[[Any, HttpRequest, QuerySet], HttpResponse | None]


class CredentialAdmin(ConsoleModelAdmin):
    """The issue page, the page that shows secrets once, and the list actions' bodies."""

    list_filter = ("disabled",)
    search_fields = ("name",)
    issue_form: ClassVar[type[forms.Form]]
    issue_title: ClassVar[str]
    issued_title: ClassVar[str]
    what: ClassVar[str]  # the row: "node", "API key"
    rows: ClassVar[str]  # the rows in the actions' texts: "nodes", "keys"
    secret: ClassVar[str]  # what is shown once: "token", "key"
    refusal: ClassVar[str]  # what a disabled row's calls get: "401"
    rotate_question: ClassVar[str]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.exclude = (f"{cls.secret}_hash",)
        rows, secret = cls.rows, cls.secret
        made = credential_actions(
            [str(name) for name in cls.actions or ()],
            rotate=(
                f"Rotate the {secret}s (shown once; old {secret}s stop working)",
                cls.rotate_question,
            ),
            disable=(
                f"Disable the selected {rows}",
                f"Disable these {rows}? Their calls get {cls.refusal} until enabled.",
            ),
            enable=(f"Enable the selected {rows}", f"Enable these {rows}?"),
        )
        for action in made:
            setattr(cls, action.__name__, action)

    @property
    def issue_template(self) -> str:
        return f"admin/{self.opts.app_label}/issue_{self.secret}.html"

    @property
    def issued_template(self) -> str:
        return f"admin/{self.opts.app_label}/{self.secret}_issued.html"

    def issue(self, request: HttpRequest, data: dict[str, Any]) -> tuple[Any, str, str]:
        """Make or rotate one secret from the issue form: (row, secret, message)."""
        raise NotImplementedError

    def rotate(self, request: HttpRequest, queryset: QuerySet) -> Issued:
        raise NotImplementedError

    def set_disabled(self, ids: Any, disabled: bool, *, actor: Any) -> int:
        raise NotImplementedError

    def issued_context(self, request: HttpRequest) -> dict[str, Any]:
        return {}

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # rows are made on the issue page, which shows the secret once

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # other rows name this one: disable it instead

    def get_urls(self) -> list[Any]:
        opts = self.model._meta
        issue = self.admin_site.admin_view(self.issue_view)
        name = f"{opts.app_label}_{opts.model_name}_issue"
        return [path("issue/", issue, name=name), *super().get_urls()]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra_context = {**(extra_context or {}), "issue_url": "issue/"}
        return super().changelist_view(request, extra_context)

    def issue_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_change_permission(request):
            return HttpResponse(status=403)
        form = self.issue_form(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                row, secret, message = self.issue(request, form.cleaned_data)
            except DomainError as error:
                form.add_error("name", error.detail)
            else:
                self.message_user(request, message, messages.SUCCESS)
                return self.show_issued(request, [(row, secret)])
        return self._page(request, self.issue_template, title=self.issue_title, form=form)

    def show_issued(self, request: HttpRequest, issued: Issued) -> TemplateResponse:
        extra = self.issued_context(request)
        response = self._page(
            request, self.issued_template, title=self.issued_title, issued=issued, **extra
        )
        response["Cache-Control"] = "no-store"
        return response

    def _page(self, request: HttpRequest, template: str, **context: Any) -> TemplateResponse:
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, **context}
        return TemplateResponse(request, template, context)

    def rotate_action(self, request: HttpRequest, queryset: QuerySet, question: str) -> Any:
        if not confirmed(self, request):
            title = f"Rotate {self.secret}s"
            return confirm(self, request, queryset, title=title, question=question)
        issued = self.rotate(request, queryset)
        self.message_user(request, f"Rotated {len(issued)} {self.secret}(s).", messages.SUCCESS)
        return self.show_issued(request, issued)

    def disable_action(
        self, request: HttpRequest, queryset: QuerySet, disabled: bool, question: str
    ) -> HttpResponse | None:
        return confirm_set_disabled(
            self,
            request,
            queryset,
            disabled,
            what=self.what,
            question=question,
            set_disabled=self.set_disabled,
        )


def credential_actions(
    names: Sequence[str],
    *,
    rotate: tuple[str, str],
    disable: tuple[str, str],
    enable: tuple[str, str],
) -> list[Action]:
    """The rotate, disable and enable list actions, under `names` (in that order);
    each of `rotate`, `disable` and `enable` is (description, question)."""

    def rotate_(self: CredentialAdmin, request: HttpRequest, queryset: QuerySet) -> Any:
        return self.rotate_action(request, queryset, rotate[1])

    def disable_(self: CredentialAdmin, request: HttpRequest, queryset: QuerySet) -> Any:
        return self.disable_action(request, queryset, True, disable[1])

    def enable_(self: CredentialAdmin, request: HttpRequest, queryset: QuerySet) -> Any:
        return self.disable_action(request, queryset, False, enable[1])

    made: list[Action] = []
    for name, function, (description, _question) in zip(
        names, (rotate_, disable_, enable_), (rotate, disable, enable), strict=True
    ):
        function.__name__ = function.__qualname__ = name
        made.append(admin.action(description=description, permissions=["change"])(function))
    return made
