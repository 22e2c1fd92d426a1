"""The range summary the triggers keep, and the dashboard drawn from it."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from seeding import services
from seeding.models import RangeStatus, SeedRange
from seeding.selectors import range_totals
from tests.support.factories import GroupFactory, SeedRangeFactory

pytestmark = pytest.mark.django_db

DASHBOARD = "/admin/dashboard/"


def recount() -> dict[str, dict[str, int]]:
    """The totals the slow way, from every range."""
    totals = {s.value: {"ranges": 0, "articles": 0, "reached": 0} for s in RangeStatus}
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status, count(*), sum(end_id - start_id + 1), sum(next_id - start_id)"
            " FROM seed_range GROUP BY status"
        )
        for status, ranges, articles, reached in cursor.fetchall():
            totals[status] = {"ranges": ranges, "articles": articles, "reached": reached}
    return totals


def summarized() -> dict[str, dict[str, int]]:
    return {
        status: {k: v[k] for k in ("ranges", "articles", "reached")}
        for status, v in range_totals().items()
    }


def batch(node, lease, next_id, headers=100):
    body = {"epoch": lease["epoch"], "next": next_id, "headers": headers}
    response = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
    assert response.status_code == 200, response.content
    return response


def test_the_summary_follows_plans_leases_batches_finishes_and_operators(node_client):
    group = GroupFactory()
    services.create_ranges(group, [(1, 1000), (1001, 2000), (2001, 3000), (3001, 4000)])
    assert summarized() == recount()
    node = node_client()
    lease = node.lease()
    batch(node, lease, lease["start"] + 400)
    assert summarized() == recount()  # leased progress is read live
    batch(node, lease, lease["end"] + 1)
    assert (
        node.post(f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]}).status_code
        == 204
    )
    second = node.lease()
    batch(node, second, second["start"] + 10)
    node.post(f"/api/v1/ranges/{second['id']}/release", {"epoch": second["epoch"]})
    assert summarized() == recount()
    ids = list(SeedRange.objects.values_list("id", flat=True))
    services.fail_ranges(ids[:1])
    services.requeue_ranges(ids[:2], from_start=True)
    services.reprioritize_ranges(ids, 5)
    assert summarized() == recount()
    SeedRange.objects.filter(id=ids[-1]).delete()
    assert summarized() == recount()
    group.delete()
    assert summarized() == recount()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM group_range_summary")
        assert cursor.fetchone()[0] == 0


def test_the_dashboard_needs_a_staff_login(client):
    response = client.get(DASHBOARD)
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_the_admin_index_links_to_the_dashboard(admin_client):
    assert DASHBOARD in admin_client.get("/admin/").content.decode()


def test_the_coverage_map_shows_done_leased_queued_failed_and_gaps(admin_client, node_client):
    group = GroupFactory(name="alt.binaries.map")
    services.create_ranges(group, [(1, 1000), (1001, 2000), (3001, 4000), (4001, 5000)])
    node = node_client()
    first = node.lease()
    batch(node, first, first["end"] + 1)
    node.post(f"/api/v1/ranges/{first['id']}/finish", {"epoch": first["epoch"]})
    second = node.lease()
    batch(node, second, second["start"] + 500)
    services.fail_ranges([SeedRange.objects.get(start_id=4001).id])
    html = admin_client.get(DASHBOARD).content.decode()
    bins = re.search(r'aria-label="coverage of alt.binaries.map" data-bins="([^"]+)"', html)
    assert bins is not None
    shown = bins.group(1).split(",")
    assert set(shown) == {"done", "reached", "leased", "gap", "queued", "failed"}
    assert shown[0] == "done" and shown[-1] == "failed"
    assert f'data-resume="{second["start"] + 500}"' in html
    assert "alt.binaries.map" in html


@pytest.mark.slow
def test_groups_are_searched_and_paged(admin_client):
    for i in range(25):
        SeedRangeFactory(group=GroupFactory(name=f"alt.binaries.page{i:02d}"))
    GroupFactory(name="alt.binaries.other")
    first = admin_client.get(DASHBOARD).content.decode()
    assert "page 1 of 2" in first
    found = admin_client.get(DASHBOARD, {"q": "OTHER"}).content.decode()
    assert "alt.binaries.other" in found and "alt.binaries.page00" not in found


def test_the_dashboard_says_why_leasing_is_paused(admin_client, settings):
    settings.DB_MAX_BYTES = 1
    html = admin_client.get(DASHBOARD).content.decode()
    assert "Leasing is paused" in html and "DB_MAX_BYTES" in html


def test_throughput_comes_from_the_rollup(admin_client, node_client):
    SeedRangeFactory(start_id=1, end_id=10_000)
    node = node_client(name="seed-fast")
    lease = node.lease()
    batch(node, lease, 5_001, headers=4_321)
    response = admin_client.get(DASHBOARD)
    data = response.context["data"]
    assert data.hourly[-1][1] == 4_321
    assert [n["headers_per_hour"] for n in data.nodes if n["name"] == "seed-fast"] == [4_321]
    assert data.groups[0].headers_per_hour == 4_321
    assert data.groups[0].eta_seconds == pytest.approx(5_000 / 4_321 * 3600)


def test_the_dashboard_reads_a_bounded_number_of_queries(
    admin_client, django_assert_max_num_queries
):
    for i in range(30):
        SeedRangeFactory(group=GroupFactory(name=f"alt.binaries.q{i}"))
    admin_client.get(DASHBOARD)
    with django_assert_max_num_queries(20):
        admin_client.get(DASHBOARD)


def many_groups(count: int) -> None:
    """`count` groups, each with a queued and a done range (two summary rows)."""
    for i in range(count):
        group = GroupFactory(name=f"alt.binaries.many{i:03d}")
        SeedRangeFactory(group=group, start_id=1, end_id=1_000 + i)
        SeedRangeFactory(group=group, start_id=2_000, end_id=2_999, status=RangeStatus.DONE)


def summary_rows_summed(sql: str, params: dict[str, object]) -> int:
    """Rows that aggregates over group_range_summary took in the statement's run."""

    def reads_summary(node: dict) -> bool:
        children = node.get("Plans", [])
        return node.get("Relation Name") == "group_range_summary" or any(
            map(reads_summary, children)
        )

    def summed(node: dict) -> int:
        children = node.get("Plans", [])
        if node["Node Type"] == "Aggregate" and reads_summary(node):
            return sum(child["Actual Rows"] * child["Actual Loops"] for child in children)
        return sum(summed(child) for child in children)

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        return summed(cursor.fetchone()[0][0]["Plan"])


@pytest.mark.slow
@pytest.mark.parametrize("statistics", ["as analyzed", "stale"])
def test_a_page_of_groups_sums_the_totals_of_its_own_groups_only(statistics):
    """Ordering needs only each group's open articles (two summary rows found by
    key); summing every group's totals and counting them by a window took 112 of
    a render's 300 ms at 10,000 groups (docs/performance.md).

    "stale": the planner believes the groups and the summary nearly empty, as
    it does after groups are added and before autovacuum analyzes them (in a
    long test run, whenever an earlier test left those statistics). The page's
    totals were then summed again for every row of the page, 26 times the
    page's rows here, until the statement materialized them once."""
    from console.selectors import queries

    many_groups(120)
    if statistics == "stale":  # rolled back with the test's transaction
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE pg_class SET reltuples = 1, relpages = 1000"
                " WHERE relname IN ('news_group', 'group_range_summary')"
            )
    params = {"search": "", "limit": 50, "offset": 0}
    # Statistics of these rows, not of what earlier tests left in the tables'
    # statistics (a summary analyzed while it held thousands of rows, or none,
    # leads the planner to another join).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE news_group, group_range_summary, seed_range, header_rollup")
    # The bound is the page's own summary rows, counted in the database: rows
    # of groups off the page cannot move it, and the statement that summed
    # every group's (240 and more) fails it.
    with connection.cursor() as cursor:
        cursor.execute(queries["group_page"], params)
        page_ids = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT count(*) FILTER (WHERE group_id = ANY(%s)), count(*) FROM group_range_summary",
            [page_ids],
        )
        page_rows, all_rows = cursor.fetchone()
    assert len(page_ids) == 50 and all_rows >= 240 > page_rows
    summed = summary_rows_summed(queries["group_page"], params)
    if summed > page_rows:  # say which plan did it
        with connection.cursor() as cursor:
            cursor.execute("EXPLAIN (ANALYZE) " + queries["group_page"], params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
        raise AssertionError(f"{summed} summary rows summed for {page_rows}:\n{plan}")


@pytest.mark.slow
def test_a_page_of_groups_is_ordered_and_counted(admin_client, node_client):
    many_groups(60)
    busy = GroupFactory(name="alt.binaries.zz-busy")
    node = node_client(name="seed-busy")
    rng = SeedRangeFactory(group=busy, start_id=1, end_id=10_000, priority=1)
    lease = node.lease()
    assert lease["id"] == rng.id
    batch(node, lease, 5_001, headers=700)
    big = GroupFactory(name="alt.binaries.zz-big")
    SeedRangeFactory(group=big, start_id=1, end_id=900_000)
    data = admin_client.get(DASHBOARD).context["data"]
    names = [g.name for g in data.groups]
    # the last hour's headers first, then open articles, then the name
    assert names[:3] == ["alt.binaries.zz-busy", "alt.binaries.zz-big", "alt.binaries.many059"]
    assert data.groups_matching == 62 and data.pages == 4
    last = admin_client.get(DASHBOARD, {"page": 4}).context["data"]
    assert [g.name for g in last.groups][-1] == "alt.binaries.many000"  # the fewest open
    assert last.groups[-1].ranges == {"queued": 1, "leased": 0, "done": 1, "failed": 0}
    assert last.groups[-1].planned == 1_000 + 1_000
    found = admin_client.get(DASHBOARD, {"q": "zz-"}).context["data"]
    assert found.groups_matching == 2
