"""Who may call what: every endpoint and every admin action, by every kind of caller.

One table, MATRIX, gives each cell's status: a row per route (and method)
or admin action, a column per caller (WHO). Node A holds a range lease and
a lane; node B is another enabled node, so its calls on A's lease are 409.
`test_the_matrix_covers_every_route` walks the URL resolver: a new endpoint
(or a new admin page or action) without a row fails it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin import helpers
from django.test import Client, RequestFactory, TestCase
from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.test import APIClient

from catalog.models import CatalogFile, Release
from indexer.models import Group
from inspections.models import Inspection
from tests.support.admin_actions import ACTIONS
from tests.support.admin_actions import world as action_world
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.reports import report, store
from tests.support.snapshots import window_snapshot
from tests.support.staff import staff_client, view_permissions

pytestmark = pytest.mark.django_db

WHO = ("none", "unknown", "disabled", "node_a", "node_b", "viewer", "staff", "superuser")
STRANGER = "203.0.113.9"  # not in METRICS_ALLOW_IPS: /metrics judges the caller alone


@dataclass(frozen=True)
class Call:
    method: str
    path: Callable[[dict[str, Any]], str]
    body: Any = None
    content_type: str = "application/json"


def cells(*statuses: int) -> dict[str, int]:
    assert len(statuses) == len(WHO)
    return dict(zip(WHO, statuses, strict=True))


# Rows that repeat: a public page; a node-only call with no lease named; a
# call on A's lease; a read for nodes and staff sessions; an admin page.
PUBLIC = cells(200, 200, 200, 200, 200, 200, 200, 200)
NODE_CALL = cells(401, 401, 401, 200, 200, 401, 401, 401)
ON_A_LEASE = cells(401, 401, 401, 204, 409, 401, 401, 401)
NODE_OR_STAFF_READ = cells(401, 401, 401, 200, 200, 200, 200, 200)
ADMIN_READ = cells(302, 302, 302, 302, 302, 200, 200, 200)  # no session: the login page
ADMIN_CHANGE = cells(302, 302, 302, 302, 302, 403, 200, 200)


def rng(action: str, body: Callable[[dict[str, Any]], Any] | None = None) -> Call:
    return Call(
        "POST",
        lambda w: f"/api/v1/ranges/{w['range']['id']}/{action}",
        body or (lambda w: {"epoch": w["range"]["epoch"]}),
    )


MISSING = {"role": "archive", "message_id": "<matrix.rar.1@host>", "error": "430 no such article"}


def inspection(action: str, body: Callable[[dict[str, Any]], Any] | None = None) -> Call:
    return Call(
        "POST",
        lambda w: f"/api/v1/inspections/{w['inspection']['id']}/{action}",
        body or (lambda w: {"epoch": w["inspection"]["epoch"]}),
    )


def lane(action: str, method: str = "POST", **kwargs: Any) -> Call:
    return Call(
        method, lambda w: f"/api/v1/groups/{w['lane_group']}/lanes/history/{action}", **kwargs
    )


BATCH = {"next": 1_000_100, "headers": 100, "files": [], "fragments": []}
SNAPSHOT = window_snapshot("alt.binaries.matrix.lanes")  # the lane's group: see build_world

# key: "METHOD url-name" (or "action app.model:name") -> (the call, status per caller)
MATRIX: dict[str, tuple[Call | None, dict[str, int]]] = {
    "GET schema": (Call("GET", lambda w: "/api/v1/schema/"), PUBLIC),
    "GET api-docs": (Call("GET", lambda w: "/api/v1/docs/"), PUBLIC),
    "GET api-docs-swagger": (Call("GET", lambda w: "/api/v1/docs/swagger/"), PUBLIC),
    "GET metrics": (
        Call("GET", lambda w: "/metrics"),
        # A bearer token that is not METRICS_TOKEN is refused as such (401).
        cells(403, 401, 401, 401, 401, 200, 200, 200),
    ),
    "GET catalog-files": (Call("GET", lambda w: "/api/v1/files"), NODE_OR_STAFF_READ),
    "GET catalog-file": (Call("GET", lambda w: f"/api/v1/files/{w['file']}"), NODE_OR_STAFF_READ),
    "GET catalog-file-nzb": (
        Call("GET", lambda w: f"/api/v1/files/{w['file']}/nzb"),
        NODE_OR_STAFF_READ,
    ),
    "GET catalog-release-nzb": (
        Call("GET", lambda w: f"/api/v1/files/{w['file']}/release/nzb"),
        NODE_OR_STAFF_READ,
    ),
    "GET catalog-releases": (Call("GET", lambda w: "/api/v1/releases"), NODE_OR_STAFF_READ),
    "GET catalog-release": (
        Call("GET", lambda w: f"/api/v1/releases/{w['release']}"),
        NODE_OR_STAFF_READ,
    ),
    "GET catalog-release-by-id-nzb": (
        Call("GET", lambda w: f"/api/v1/releases/{w['release']}/nzb"),
        NODE_OR_STAFF_READ,
    ),
    "GET status": (Call("GET", lambda w: "/api/v1/status"), NODE_OR_STAFF_READ),
    "GET ping": (Call("GET", lambda w: "/api/v1/ping"), NODE_CALL),
    # newznab callers hold API keys, not node tokens or logins: caps needs none, and
    # a search or feed without a key is the spec's error 100 in a 200 answer.
    "GET newznab-api": (Call("GET", lambda w: "/api?t=caps"), PUBLIC),
    "GET newznab-rss": (Call("GET", lambda w: "/rss"), PUBLIC),
    "POST range-lease": (Call("POST", lambda w: "/api/v1/ranges/lease"), NODE_CALL),
    "POST range-batch": (
        rng("batch", lambda w: {"epoch": w["range"]["epoch"], **BATCH}),
        cells(401, 401, 401, 200, 409, 401, 401, 401),
    ),
    "POST range-heartbeat": (rng("heartbeat"), ON_A_LEASE),
    "POST range-finish": (rng("finish"), ON_A_LEASE),
    "POST range-release": (rng("release"), ON_A_LEASE),
    "GET range-overviews": (
        Call(
            "GET",
            lambda w: (
                f"/api/v1/ranges/{w['range']['id']}/overviews?epoch={w['range']['epoch']}"
                f"&from={w['range']['start']}&to={w['range']['start']}"
            ),
        ),
        # A's lease is checked first; then the coordinator has no news server (503).
        cells(401, 401, 401, 503, 409, 401, 401, 401),
    ),
    "POST inspection-lease": (Call("POST", lambda w: "/api/v1/inspections/lease"), NODE_CALL),
    "POST inspection-heartbeat": (inspection("heartbeat"), ON_A_LEASE),
    "POST inspection-release": (inspection("release"), ON_A_LEASE),
    "POST inspection-report": (
        inspection(
            "report",
            lambda w: {"epoch": w["inspection"]["epoch"], "results": [], "missing": [MISSING]},
        ),
        cells(401, 401, 401, 200, 409, 401, 401, 401),
    ),
    # Several reports in one call: answered 200 as a call; node B's report of A's
    # inspection is that report's own 409 inside it, and A keeps the lease
    # (tests/inspections/test_leases.py, "another node's").
    "POST inspection-reports": (
        Call(
            "POST",
            lambda w: "/api/v1/inspections/reports",
            lambda w: {
                "reports": [
                    {
                        "id": w["inspection"]["id"],
                        "epoch": w["inspection"]["epoch"],
                        "results": [],
                        "missing": [MISSING],
                    }
                ]
            },
        ),
        NODE_CALL,
    ),
    # An invalid report (no result, nothing missing): the fence answers before the checks.
    "POST inspection-report-empty": (
        inspection("report", lambda w: {"epoch": w["inspection"]["epoch"], "results": []}),
        cells(401, 401, 401, 400, 409, 401, 401, 401),
    ),
    "GET inspection-body": (
        Call(
            "GET",
            lambda w: (
                f"/api/v1/inspections/{w['inspection']['id']}/body?epoch="
                f"{w['inspection']['epoch']}&message_id=%3Cmatrix.rar.1%40host%3E"
            ),
        ),
        # A's lease is checked first; then the coordinator has no news server (503).
        cells(401, 401, 401, 503, 409, 401, 401, 401),
    ),
    "POST group-lease": (
        Call("POST", lambda w: "/api/v1/groups/lease", lambda w: {"lane": "history"}),
        NODE_CALL,
    ),
    "POST lane-next": (
        lane("next", body=lambda w: {"epoch": w["lane_epoch"]}),
        cells(401, 401, 401, 200, 409, 401, 401, 401),
    ),
    "POST lane-heartbeat": (
        lane("heartbeat", body=lambda w: {"epoch": w["lane_epoch"]}),
        ON_A_LEASE,
    ),
    "POST lane-release": (lane("release", body=lambda w: {"epoch": w["lane_epoch"]}), ON_A_LEASE),
    "PUT lane-snapshot": (
        Call(
            "PUT",
            lambda w: (
                f"/api/v1/groups/{w['lane_group']}/lanes/history/snapshot"
                f"?epoch={w['lane_epoch']}&next=1000000"
            ),
            lambda w: SNAPSHOT,
            "application/gzip",
        ),
        ON_A_LEASE,
    ),
    "GET lane-snapshot": (
        Call(
            "GET",
            lambda w: (
                f"/api/v1/groups/{w['lane_group']}/lanes/history/snapshot?epoch={w['lane_epoch']}"
            ),
        ),
        cells(401, 401, 401, 200, 409, 401, 401, 401),
    ),
    "GET admin:dashboard": (Call("GET", lambda w: "/admin/dashboard/"), ADMIN_READ),
    "GET admin:indexer_node_issue": (
        Call("GET", lambda w: "/admin/indexer/node/issue/"),
        ADMIN_CHANGE,
    ),
    "POST admin:indexer_node_issue": (
        Call(
            "POST",
            lambda w: "/admin/indexer/node/issue/",
            lambda w: "name=seed-new",
            "application/x-www-form-urlencoded",
        ),
        ADMIN_CHANGE,
    ),
    "GET admin:indexer_group_plan": (
        Call("GET", lambda w: "/admin/indexer/group/plan/"),
        ADMIN_CHANGE,
    ),
    "GET admin:catalog_catalogfile_nzb": (
        Call("GET", lambda w: f"/admin/catalog/catalogfile/{w['file']}/nzb/"),
        ADMIN_READ,
    ),
    "GET admin:newznab_apikey_issue": (
        Call("GET", lambda w: "/admin/newznab/apikey/issue/"),
        ADMIN_CHANGE,
    ),
    "GET admin:catalog_release_nzb": (
        Call("GET", lambda w: f"/admin/catalog/release/{w['release']}/nzb/"),
        ADMIN_READ,
    ),
    "GET admin:catalog_catalogfile_release_nzb": (
        Call("GET", lambda w: f"/admin/catalog/catalogfile/{w['file']}/release-nzb/"),
        ADMIN_READ,
    ),
}

# Every admin action's first step (its confirmation page), by every caller.
# The staff column holds the coordinator's apps' view, change and delete
# permissions, not auth's, nor an action's own (catalog.reinspect_release).
for _act in ACTIONS:
    _ok = 302 if _act.confirm is None else _act.page
    _viewer = _ok if _act.permission == "view" else 403
    _own = _act.permission not in ("view", "change", "delete")
    _staff = _ok if not _act.model.startswith("auth.") and not _own else 403
    MATRIX[f"action {_act.model}:{_act.action}"] = (
        None,
        cells(302, 302, 302, 302, 302, _viewer, _staff, _ok),
    )


def build_world(snapshot_dir: Any) -> dict[str, Any]:
    """Node A holds a range and a lane (with a snapshot); B and a disabled node exist."""
    node_a, node_b = NodeFactory(name="node-a"), NodeFactory(name="node-b")
    disabled = NodeFactory(name="node-off", disabled=True)
    first = GroupFactory(name="alt.binaries.matrix")
    SeedRangeFactory(group=first, start_id=1_000_000, end_id=1_004_999)
    a = token_client(node_a.token)
    held = a.post("/api/v1/ranges/lease", {}, format="json").json()["lease"]
    Group.objects.filter(id=first.id).update(active=False)  # the lane goes to the second
    second = GroupFactory(name="alt.binaries.matrix.lanes")
    SeedRangeFactory(group=second, start_id=1, end_id=5000)
    SeedRangeFactory(group=second, start_id=5001, end_id=9000)
    lease = a.post("/api/v1/groups/lease", {"lane": "history"}, format="json").json()["lease"]
    assert lease["group"]["id"] == second.id
    path = f"/api/v1/groups/{second.id}/lanes/history/snapshot?epoch={lease['epoch']}&next=1"
    # The file replaces the old one once the row commits (on_commit): run it here.
    with TestCase.captureOnCommitCallbacks(execute=True):
        assert a.generic("PUT", path, SNAPSHOT, content_type="application/gzip").status_code == 204
    store(first, report("matrix.rar", [1], 1, index=1, count=2))  # "(1/2)": a release
    release = Release.objects.get()
    article = {"role": "archive", "message_ids": ["<matrix.rar.1@host>"], "bytes": 1, "name": "x"}
    Inspection.objects.create(
        release=release, group=first, posted=release.posted, planned_at=release.posted,
        articles=[article],
    )  # fmt: skip
    inspected = a.post("/api/v1/inspections/lease", {}, format="json").json()["lease"]
    return {
        "tokens": {"node_a": node_a.token, "node_b": node_b.token, "disabled": disabled.token},
        "range": held,
        "lane_group": second.id,
        "lane_epoch": lease["epoch"],
        "file": CatalogFile.objects.get().pk,
        "release": release.pk,
        "inspection": inspected,
    }


def node_tokens() -> dict[str, str]:
    return {
        "node_a": NodeFactory(name="node-a").token,
        "node_b": NodeFactory(name="node-b").token,
        "disabled": NodeFactory(name="node-off", disabled=True).token,
    }


def token_client(token: str) -> APIClient:
    client = APIClient(REMOTE_ADDR=STRANGER)
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return client


def caller(who: str, tokens: dict[str, str]) -> Any:
    if who == "none":
        return APIClient(REMOTE_ADDR=STRANGER)
    if who == "unknown":
        return token_client("sn_" + "u" * 32)
    if who in tokens:
        return token_client(tokens[who])
    app_permissions = [
        p.replace(".view_", f".{verb}_")
        for p in view_permissions()
        for verb in ("view", "change", "delete")
    ]
    client: Client = {
        "viewer": lambda: staff_client("viewer", view_permissions()),
        "staff": lambda: staff_client("staff", app_permissions),
        "superuser": lambda: staff_client("root", [], superuser=True),
    }[who]()
    client.defaults["REMOTE_ADDR"] = STRANGER
    return client


def send(client: Any, call: Call, w: dict[str, Any]) -> int:
    body = call.body(w) if call.body else None
    if isinstance(body, dict):
        body = json.dumps(body)
    data = body if body is not None else ""
    return client.generic(
        call.method, call.path(w), data, content_type=call.content_type
    ).status_code


def run_action(client: Any, key: str) -> int:
    model, name = key.removeprefix("action ").split(":")
    objects = action_world()
    act = next(a for a in ACTIONS if a.model == model and a.action == name)
    chosen = {"action": name, helpers.ACTION_CHECKBOX_NAME: [str(objects[act.target or model])]}
    return client.post(f"/admin/{model.replace('.', '/')}/", {**chosen, "index": "0"}).status_code


@pytest.mark.slow
@pytest.mark.parametrize(("key", "who"), [(k, w) for k in MATRIX for w in WHO])
def test_each_caller_gets_the_status_the_matrix_gives(key, who, settings, tmp_path):
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    settings.METRICS_ALLOW_IPS = []
    call, expected = MATRIX[key]
    if call is None:  # an admin action: its own world (tests/security/test_admin_actions.py)
        status = run_action(caller(who, node_tokens()), key)
    else:
        w = build_world(tmp_path)
        status = send(caller(who, w["tokens"]), call, w)
    assert status == expected[who], f"{key} as {who}"


STANDARD_ADMIN = {
    "index",
    "login",
    "logout",
    "password_change",
    "password_change_done",
    "autocomplete",
    "jsi18n",
    "view_on_site",
    "app_list",
}
CRUD = ("_changelist", "_add", "_change", "_delete", "_history")


def routes(patterns: Any, namespace: str | None = None) -> set[str]:
    """Every named route: "name" or "admin:name" for the admin's own pages."""
    found: set[str] = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found |= routes(pattern.url_patterns, pattern.namespace or namespace)
        elif isinstance(pattern, URLPattern) and pattern.name:
            found.add(f"{namespace}:{pattern.name}" if namespace else pattern.name)
    return found


def test_the_matrix_covers_every_route(admin_user):
    covered = {key.split(" ", 1)[1] for key in MATRIX if not key.startswith("action ")}
    ours = {
        name
        for name in routes(get_resolver().url_patterns)
        if not name.startswith("admin:")
        or (name.removeprefix("admin:") not in STANDARD_ADMIN and not name.endswith(CRUD))
    }
    assert ours <= covered, f"routes without a row in MATRIX: {sorted(ours - covered)}"
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    actions = {
        f"action {model._meta.app_label}.{model._meta.model_name}:{name}"
        for model, modeladmin in admin.site._registry.items()
        for name in modeladmin.get_actions(request)
    }
    assert actions <= set(MATRIX), f"admin actions without a row: {sorted(actions - set(MATRIX))}"
