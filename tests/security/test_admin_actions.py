"""Every admin action by {view-only staff, staff holding its permission, superuser}.

One table (ACTIONS) names each action, the permission it declares and what
its two steps answer to a user who holds that permission. A view-only staff
user is refused with 403 at both steps (the action is not offered) and nothing
changes. A new action without a row fails
`test_the_table_covers_every_admin_action`.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.apps import apps
from django.contrib import admin
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.test import RequestFactory

from catalog.models import CatalogFile
from core.admin_tools import confirm_then
from indexer.models import AuditEntry, Group, Node
from inspections.models import Inspection
from leases.models import GroupLane
from newznab.models import ApiKey
from seeding.models import SeedRange
from tests.support.admin_actions import ACTIONS, CONFIRMED, Act, world
from tests.support.factories import NodeFactory
from tests.support.staff import staff_client, view_permissions

pytestmark = pytest.mark.django_db


WATCHED = (Node, Group, SeedRange, GroupLane, CatalogFile, ApiKey, Inspection)


def state() -> tuple[Any, ...]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group as StaffGroup

    rows = [list(model.objects.order_by("pk").values()) for model in WATCHED]
    people = [sorted(get_user_model().objects.values_list("username", flat=True))]
    return (
        *rows,
        people,
        list(StaffGroup.objects.values_list("name", flat=True)),
        AuditEntry.objects.count(),
    )


def run(client: Any, act: Act, pk: int) -> tuple[int, int | None]:
    url = f"/admin/{act.model.replace('.', '/')}/"
    chosen = {"action": act.action, helpers.ACTION_CHECKBOX_NAME: [str(pk)]}
    page = client.post(url, {**chosen, "index": "0"})
    if act.confirm is None:
        return page.status_code, None
    done = client.post(url, {**chosen, **act.confirm})
    return page.status_code, done.status_code


def holder(act: Act, who: str) -> Any:
    app_label, model = act.model.split(".")
    if who == "superuser":
        return staff_client("root", [], superuser=True)
    if who == "view-only":
        return staff_client("viewer", view_permissions())
    return staff_client(who, [f"{app_label}.view_{model}", f"{app_label}.{act.permission}_{model}"])


@pytest.mark.slow
@pytest.mark.parametrize("who", ["view-only", "permitted", "superuser"])
@pytest.mark.parametrize("act", ACTIONS, ids=lambda a: f"{a.model}:{a.action}")
def test_each_admin_action_needs_its_declared_permission(act: Act, who: str) -> None:
    objects = world()
    client = holder(act, who)
    before = state()
    statuses = run(client, act, objects[act.target or act.model])
    allowed = who != "view-only" or act.permission == "view"
    if allowed:
        assert statuses == (act.page, act.done if act.confirm else None)
        assert (state() != before) == act.changes
    else:
        # Refused at both steps (ConsoleModelAdmin; Django's own admins: no access).
        assert statuses == (403, 403 if act.confirm else None)
        assert state() == before


def test_the_table_covers_every_admin_action(admin_user: Any) -> None:
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    registered = {
        (f"{model._meta.app_label}.{model._meta.model_name}", name)
        for model, modeladmin in admin.site._registry.items()
        for name in modeladmin.get_actions(request)
    }
    assert registered == {(act.model, act.action) for act in ACTIONS}


def test_each_action_declares_the_permission_of_its_row(admin_user: Any) -> None:
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    for act in ACTIONS:
        modeladmin = admin.site._registry[apps.get_model(act.model)]
        func = modeladmin.get_actions(request)[act.action][0]
        assert list(func.allowed_permissions) == [act.permission], act


def test_the_confirm_helper_refuses_on_both_steps_without_the_permission() -> None:
    """Even when Django's own filtering is bypassed, the shared helper checks again."""
    node = NodeFactory()
    from django.contrib.auth import get_user_model

    viewer = get_user_model().objects.create_user("helper-viewer", is_staff=True)
    modeladmin = admin.site._registry[Node]
    for fields in ({"action": "disable_nodes"}, {"action": "disable_nodes", **CONFIRMED}):
        request = RequestFactory().post("/admin/indexer/node/", fields)
        request.user = viewer
        with pytest.raises(PermissionDenied):
            confirm_then(
                modeladmin,
                request,
                Node.objects.filter(pk=node.pk),
                lambda ids: "acted",
                title="t",
                question="q",
            )
    assert not Node.objects.get(pk=node.pk).disabled


def test_an_action_that_declares_no_permission_is_refused(admin_user: Any) -> None:
    modeladmin = admin.site._registry[Node]
    request = RequestFactory().post("/admin/indexer/node/", {"action": "no_such_action"})
    request.user = admin_user
    with pytest.raises(PermissionDenied):
        confirm_then(
            modeladmin, request, Node.objects.none(), lambda ids: "", title="", question=""
        )
