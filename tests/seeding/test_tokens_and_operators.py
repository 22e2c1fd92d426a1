"""Operator commands and the ranges' admin pages."""

from __future__ import annotations

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from core.tokens import hash_token
from indexer.models import Node
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import NodeFactory, SeedRangeFactory

pytestmark = pytest.mark.django_db


def test_seed_status_prints_a_table_and_json():
    SeedRangeFactory(start_id=1, end_id=100)
    NodeFactory(name="seed-a")
    out = StringIO()
    call_command("seed_status", stdout=out)
    text = out.getvalue()
    assert "queued" in text and "seed-a" in text and "Headers in the last hour" in text
    out = StringIO()
    call_command("seed_status", "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["ranges"]["queued"]["ranges"] == 1
    assert data["ranges"]["queued"]["articles"] == 100
    assert data["nodes"][0]["name"] == "seed-a"


class TestAdmin:
    def test_issuing_a_token_in_the_admin_shows_it_once(self, admin_client):
        page = admin_client.get("/admin/indexer/node/issue/")
        assert page.status_code == 200
        response = admin_client.post("/admin/indexer/node/issue/", {"name": "seed-web"})
        assert response.status_code == 200
        token = re.search(r"sn_[A-Za-z0-9_-]{32}", response.content.decode()).group(0)
        assert "no-store" in response["Cache-Control"]
        assert Node.objects.get(name="seed-web").token_hash == hash_token(token)
        listing = admin_client.get("/admin/indexer/node/").content.decode()
        assert token not in listing

    def test_disabling_asks_first_then_reports_a_count(self, admin_client):
        nodes = [NodeFactory(), NodeFactory()]
        data = {"action": "disable_nodes", "_selected_action": [n.id for n in nodes]}
        confirm = admin_client.post("/admin/indexer/node/", data)
        assert confirm.status_code == 200
        assert b"Disable these nodes?" in confirm.content
        assert not Node.objects.filter(disabled=True).exists()
        done = admin_client.post("/admin/indexer/node/", {**data, "confirmed": "yes"}, follow=True)
        assert b"Disabled 2 node(s)." in done.content
        assert Node.objects.filter(disabled=True).count() == 2

    @pytest.mark.slow
    def test_range_actions_requeue_fail_and_reprioritize(self, admin_client):
        failed = SeedRangeFactory(status=RangeStatus.FAILED, attempts=5, error="boom")
        queued = SeedRangeFactory()
        url = "/admin/seeding/seedrange/"
        response = admin_client.post(
            url,
            {"action": "requeue", "_selected_action": [failed.id, queued.id], "confirmed": "yes"},
            follow=True,
        )
        assert b"Requeued 1 range(s)." in response.content
        failed.refresh_from_db()
        assert (failed.status, failed.attempts, failed.error) == (RangeStatus.QUEUED, 0, "")
        response = admin_client.post(
            url,
            {"action": "mark_failed", "_selected_action": [queued.id], "confirmed": "yes"},
            follow=True,
        )
        assert b"Marked 1 range(s) failed." in response.content
        assert SeedRange.objects.get(id=queued.id).status == RangeStatus.FAILED
        ask = admin_client.post(url, {"action": "change_priority", "_selected_action": [failed.id]})
        assert b"priority" in ask.content
        response = admin_client.post(
            url,
            {
                "action": "change_priority",
                "_selected_action": [failed.id],
                "confirmed": "yes",
                "priority": "5",
            },
            follow=True,
        )
        assert b"Changed the priority of 1 range(s)." in response.content
        assert SeedRange.objects.get(id=failed.id).priority == 5

    @pytest.mark.slow
    def test_the_range_list_filters_by_status_with_a_fixed_number_of_queries(
        self, admin_client, django_assert_max_num_queries
    ):
        for _ in range(30):
            SeedRangeFactory()
        for _ in range(4):
            SeedRangeFactory(status=RangeStatus.FAILED)
        with django_assert_max_num_queries(12):
            response = admin_client.get("/admin/seeding/seedrange/?status__exact=queued")
        assert response.status_code == 200
        assert response.context["cl"].result_count == 30
        assert {r.status for r in response.context["cl"].result_list} == {RangeStatus.QUEUED}


def test_the_range_pages_cannot_edit_or_add_ranges_and_search_by_id(admin_client):
    rng = SeedRangeFactory(start_id=1, end_id=100)
    other = SeedRangeFactory(start_id=101, end_id=200)
    url = f"/admin/seeding/seedrange/{rng.id}/change/"
    page = admin_client.get(url)
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert admin_client.post(url, {"next_id": 1, "status": "done"}).status_code == 403
    rng.refresh_from_db()
    assert (rng.next_id, rng.status) == (1, RangeStatus.QUEUED)
    assert admin_client.get("/admin/seeding/seedrange/add/").status_code == 403
    found = admin_client.get(f"/admin/seeding/seedrange/?q={other.id}")
    assert [r.id for r in found.context["cl"].result_list] == [other.id]
    assert list(admin_client.get("/admin/seeding/seedrange/?q=x1").context["cl"].result_list) == []


def test_the_range_list_filters_by_group_name_and_node(admin_client):
    a = SeedRangeFactory(group__name="alt.binaries.aaa")
    b = SeedRangeFactory(group__name="alt.binaries.bbb")
    response = admin_client.get("/admin/seeding/seedrange/?group_name=alt.binaries.bbb")
    assert response.status_code == 200
    ids = [r.id for r in response.context["cl"].result_list]
    assert ids == [b.id]
    node = NodeFactory()
    SeedRange.objects.filter(id=a.id).update(node=node)
    response = admin_client.get(f"/admin/seeding/seedrange/?node__id__exact={node.id}")
    assert [r.id for r in response.context["cl"].result_list] == [a.id]


def test_status_reads_totals_from_the_summary_and_nodes_from_their_last_hour(node_client):
    SeedRangeFactory(start_id=1, end_id=100)
    SeedRangeFactory(start_id=101, end_id=300)
    busy, idle = node_client(name="busy"), node_client(name="idle")
    lease = busy.lease()
    busy.post(
        f"/api/v1/ranges/{lease['id']}/batch",
        {"epoch": lease["epoch"], "next": lease["start"] + 40, "headers": 40},
    )
    with connection.cursor() as cursor:  # an old minute of the same node does not count
        cursor.execute(
            "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
            " SELECT date_trunc('minute', now()) - interval '3 hours', %s, group_id, 999, 1"
            " FROM seed_range WHERE id = %s",
            [busy.node.id, lease["id"]],
        )
    status = idle.get("/api/v1/status").json()
    assert lease["end"] == 100  # plan order: the first range goes first
    assert status["ranges"]["queued"] == {
        "ranges": 1,
        "articles": 200,
        "reached": 0,
        "headers": 0,
        "files": 0,
    }
    assert status["ranges"]["leased"]["reached"] == 40
    assert status["ranges"]["leased"]["headers"] == 40
    nodes = {n["name"]: n for n in status["nodes"]}
    assert (nodes["busy"]["live_leases"], nodes["busy"]["headers_last_hour"]) == (1, 40)
    assert (nodes["idle"]["live_leases"], nodes["idle"]["headers_last_hour"]) == (0, 0)
    assert status["headers_last_hour"] == 40


def test_folding_the_hours_then_pruning_drops_minutes_older_than_kept(settings):
    from seeding.maintenance import fold_node_totals, fold_rollup_hours, prune_rollup_minutes

    settings.ROLLUP_MINUTES_KEEP_HOURS = 48
    rng = SeedRangeFactory()
    node = NodeFactory()
    with connection.cursor() as cursor:
        for hours in (72, 50, 30, 2):
            cursor.execute(
                "INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)"
                " VALUES (date_trunc('minute', now()) - make_interval(hours => %s), %s, %s, 10, 1)",
                [hours, node.id, rng.group_id],
            )
    assert fold_rollup_hours() > 0
    assert prune_rollup_minutes() == 0  # not in the node totals yet: nothing is dropped
    assert fold_node_totals() == 4
    assert prune_rollup_minutes() == 2
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT round(extract(epoch FROM now() - bucket) / 3600) FROM header_rollup ORDER BY 1"
        )
        assert [int(h) for (h,) in cursor.fetchall()] == [2, 30]
