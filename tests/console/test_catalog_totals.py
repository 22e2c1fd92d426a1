"""The catalog's totals on the dashboard, in /api/v1/status, seed_status and /metrics:
exact, from the per-group summary, and equal to a direct COUNT/SUM over the tables."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from catalog.models import CatalogFile
from catalog.services import store_files
from tests.support import catalog_figures as figures
from tests.support.factories import GroupFactory
from tests.support.reports import report

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/dashboard/"


def counted() -> figures.Figures:
    with connection.cursor() as cursor:
        cursor.execute(figures.COUNT_SQL)
        return figures.counted(cursor.fetchone())


def counted_by_group() -> dict[str, tuple[int, int]]:
    with connection.cursor() as cursor:
        cursor.execute(figures.COUNT_BY_GROUP_SQL)
        return figures.counted_by_group(cursor.fetchall())


def fill_two_groups():
    one = GroupFactory(name="alt.binaries.totals.one")
    two = GroupFactory(name="alt.binaries.totals.two")
    store_files(
        one.id,
        None,
        [report("a.rar", [1, 2], total=2), report("b.rar", [1], total=3, date=1_700_000_400)],
        [report("b.rar", [1], total=3, host="elsewhere")],  # a conflict
    )
    store_files(two.id, None, [report("c.rar", [1, 2, 3], total=3, date=1_700_000_900)], [])
    return one, two


def assert_every_figure_is_exact(admin_client, node_client) -> None:
    expected = counted()
    html = admin_client.get(DASHBOARD).content.decode()
    assert "≈" not in html
    assert figures.from_dashboard(html) == expected
    shown = {name: (c, f) for name, (c, f, _) in figures.groups_from_dashboard(html).items()}
    assert shown == counted_by_group()
    assert figures.from_status(node_client().get("/api/v1/status").json()) == expected
    metrics = admin_client.get("/metrics", REMOTE_ADDR="127.0.0.1").content.decode()
    assert figures.from_metrics(metrics) == expected
    status = json.loads(call_command("seed_status", "--json", stdout=StringIO()))
    assert figures.from_status(status) == expected


def test_the_console_shows_the_catalogs_exact_totals(admin_client, node_client):
    fill_two_groups()
    assert counted() == figures.Figures(3, 2, 6, 4_200_010, 1, 1_700_000_900)
    assert_every_figure_is_exact(admin_client, node_client)


def test_each_group_row_links_to_its_files_in_the_admin(admin_client):
    one, _ = fill_two_groups()
    groups = figures.groups_from_dashboard(admin_client.get(DASHBOARD).content.decode())
    complete, files, link = groups["alt.binaries.totals.one"]
    assert (complete, files) == (1, 2)
    assert link == f"/admin/catalog/catalogfile/?group__id__exact={one.id}"
    listed = admin_client.get(link).content.decode()
    assert "a.rar" in listed and "c.rar" not in listed


def test_the_totals_stay_exact_after_pruning_and_a_deletion_in_the_admin(admin_client, node_client):
    fill_two_groups()
    with connection.cursor() as cursor:
        cursor.execute("UPDATE catalog_file SET updated_at = now() - interval '5 hours'")
    call_command("prune_catalog", "--incomplete-older-than", "1", stdout=StringIO())
    assert CatalogFile.objects.count() == 2
    assert_every_figure_is_exact(admin_client, node_client)
    newest = CatalogFile.objects.get(name="c.rar")
    body = {"action": "delete_files", "_selected_action": [newest.id], "confirmed": "yes"}
    response = admin_client.post("/admin/catalog/catalogfile/", body)
    assert response.status_code == 302
    assert not CatalogFile.objects.filter(id=newest.id).exists()
    assert_every_figure_is_exact(admin_client, node_client)


def test_seed_status_prints_the_catalog_totals():
    fill_two_groups()
    out = call_command("seed_status", stdout=StringIO())
    assert "catalog files" in out
    assert "4,200,010" in out and "2023-11-14T22:28:20+00:00" in out
