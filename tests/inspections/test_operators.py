"""What an operator does with inspections: the admin list and manage.py inspections."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from indexer.models import AuditEntry
from inspections.models import Inspection, InspectionStatus
from tests.support.staff import staff_client

pytestmark = pytest.mark.django_db


def test_requeue_and_fail_from_the_command_line(planned, node_client, capsys):
    row = planned()
    node = node_client()
    node.post("/api/v1/inspections/lease")
    call_command("inspections", "fail", str(row.id), "--reason", "the par2 is garbage")
    row.refresh_from_db()
    assert (row.status, row.error) == (InspectionStatus.FAILED, "the par2 is garbage")
    call_command("inspections", "list", "--status", "failed")
    listed = capsys.readouterr().out
    assert "the par2 is garbage" in listed and "a8f7d6e5c4b3" in listed
    call_command("inspections", "requeue", str(row.id))
    row.refresh_from_db()
    assert (row.status, row.attempts, row.error, row.node_id) == ("queued", 0, "", None)
    assert AuditEntry.objects.filter(object_type="inspection").count() == 2
    with pytest.raises(CommandError, match="--reason needs some text"):
        call_command("inspections", "fail", str(row.id), "--reason", " ")


@pytest.mark.parametrize("action", ["requeue", "fail"])
@pytest.mark.parametrize(
    ("text", "says"),
    [
        (str(2**63), "is not an inspection id: expected a whole number from 1 to"),
        ("-3", "is not an inspection id: expected a whole number from 1 to"),
        ("0", "is not an inspection id"),
        ("\u0661", "is not an inspection id"),  # Arabic-Indic one: int() would take it
        ("12x", "is not an inspection id"),
    ],
)
def test_an_id_that_is_no_inspection_id_is_refused_with_a_sentence(planned, action, text, says):
    row = planned()
    with pytest.raises(CommandError, match=says):
        call_command("inspections", action, str(row.id), text)
    row.refresh_from_db()
    assert row.status == InspectionStatus.QUEUED  # nothing was done


@pytest.mark.parametrize("limit", ["0", "10001", "\u0665", "x"])
def test_a_list_limit_out_of_range_is_refused_with_a_sentence(limit):
    with pytest.raises(CommandError, match="is not a --limit: expected a whole number from 1"):
        call_command("inspections", "list", "--limit", limit)


def test_a_requeued_lease_fences_its_old_holder(planned, node_client):
    row = planned()
    node = node_client()
    leased = node.post("/api/v1/inspections/lease").json()["lease"]
    call_command("inspections", "requeue", str(row.id))
    response = node.post(f"/api/v1/inspections/{row.id}/heartbeat", {"epoch": leased["epoch"]})
    assert response.status_code == 409
    assert "is queued, not leased: lease another inspection." in response.json()["detail"]


def test_the_admin_lists_inspections_and_its_actions_need_the_change_permission(planned):
    row = planned()
    viewer = staff_client("viewer", ["inspections.view_inspection"])
    page = viewer.get("/admin/inspections/inspection/")
    assert page.status_code == 200
    assert b"a8f7d6e5c4b3" in page.content
    refused = viewer.post(
        "/admin/inspections/inspection/",
        {"action": "mark_failed", "_selected_action": [row.id], "confirmed": "yes"},
    )
    assert refused.status_code in (200, 302, 403)
    row.refresh_from_db()
    assert row.status == InspectionStatus.QUEUED
    changer = staff_client(
        "changer", ["inspections.view_inspection", "inspections.change_inspection"]
    )
    done = changer.post(
        "/admin/inspections/inspection/",
        {"action": "mark_failed", "_selected_action": [row.id], "confirmed": "yes"},
    )
    assert done.status_code == 302
    row.refresh_from_db()
    assert row.status == InspectionStatus.FAILED
    assert Inspection.objects.filter(status="failed").count() == 1


def test_inspect_again_requeues_a_done_row_and_plans_a_named_release(planned, store, node_client):
    row = planned()
    node = node_client()
    leased = node.post("/api/v1/inspections/lease").json()["lease"]
    body = {"epoch": leased["epoch"], "results": [{"role": "par2", "format": "par2"}]}
    assert node.post(f"/api/v1/inspections/{row.id}/report", body).status_code == 200
    named = store("Some.Show.S01E02.1080p.WEB.h264-GRP", date=1_700_100_000)
    call_command("reinspect", str(row.release_id), str(named.id), verbosity=0)
    row.refresh_from_db()
    assert (row.status, row.attempts, row.node_id) == ("queued", 0, None)
    again = Inspection.objects.get(release=named)  # named: planned only because it was asked
    assert again.status == InspectionStatus.QUEUED and again.articles
    leased_again = node.post("/api/v1/inspections/lease").json()["lease"]
    assert leased_again["id"] == again.id  # the newer release first
