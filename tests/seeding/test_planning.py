"""plan_ranges and plan_tail against the in-repo news server."""

from __future__ import annotations

import pytest
from django.db import connection

from indexer.models import Group
from seeding.models import SeedRange
from seeding.planning import UnknownGroups, plan_ranges, plan_tail
from seeding.services import create_ranges
from tests.support.factories import GroupFactory
from tests.support.news import START, STEP

pytestmark = pytest.mark.django_db


def spans(group: Group) -> list[tuple[int, int]]:
    return list(
        SeedRange.objects.filter(group=group).order_by("id").values_list("start_id", "end_id")
    )


def test_history_runs_from_the_first_article_to_where_live_indexing_began(news_group):
    group = news_group("alt.binaries.a", 1, 10_000, live_from=9_001)
    summary = plan_ranges([group.name], size=1_000)
    (plan,) = summary.groups
    assert (plan.low, plan.high, plan.ranges, plan.gaps, plan.articles) == (1, 9_000, 9, 1, 9_000)
    assert spans(group) == [(9_000 - 1_000 * k + 1, 9_000 - 1_000 * (k - 1)) for k in range(1, 10)]
    assert all(r.priority == 100 and r.status == "queued" for r in SeedRange.objects.all())


def test_days_puts_the_bottom_at_the_article_posted_that_long_ago(news_group):
    group = news_group("alt.binaries.days", 1, 287_000)
    summary = plan_ranges([group.name], days=10)
    with connection.cursor() as cursor:
        cursor.execute("SELECT extract(epoch FROM now())::bigint")
        now = cursor.fetchone()[0]
    expected = -(-(now - 10 * 86400 - START) // STEP)
    (plan,) = summary.groups
    assert abs(plan.low - expected) <= 2
    assert plan.high == 287_000  # every article is older than created_at
    assert min(s for s, _ in spans(group)) == plan.low


def test_days_before_the_oldest_article_leave_nothing_to_plan(news_group):
    group = news_group("alt.binaries.stale", 1, 1_000)  # posted ~199 days ago
    summary = plan_ranges([group.name], days=10)
    assert summary.ranges == 0
    assert "nothing posted" in summary.groups[0].note


def test_planning_twice_adds_nothing(news_group):
    group = news_group("alt.binaries.twice", 1, 20_000, live_from=15_001)
    first = plan_ranges([group.name], size=3_000)
    second = plan_ranges([group.name], size=3_000)
    assert first.ranges == 5 and second.ranges == 0 and second.articles == 0
    assert SeedRange.objects.count() == 5


def test_only_the_stretches_no_range_covers_are_planned_whatever_their_state(news_group):
    group = news_group("alt.binaries.gaps", 1, 10_000)
    create_ranges(group, [(2_001, 3_000), (6_000, 6_999)])
    SeedRange.objects.filter(start_id=6_000).update(status="failed")
    summary = plan_ranges([group.name], size=2_500)
    (plan,) = summary.groups
    assert plan.gaps == 3
    new = spans(group)[2:]
    assert new == [(7_501, 10_000), (7_000, 7_500), (3_500, 5_999), (3_001, 3_499), (1, 2_000)]


def test_ranges_interleave_across_groups_newest_first(news_group):
    a = news_group("alt.binaries.i1", 1, 3_000, priority=1)
    b = news_group("alt.binaries.i2", 1, 1_000, priority=2)
    plan_ranges([b.name, a.name], size=1_000)
    ordered = list(
        SeedRange.objects.order_by("id").values_list("group__name", "start_id", "end_id")
    )
    assert ordered == [
        ("alt.binaries.i1", 2_001, 3_000),
        ("alt.binaries.i2", 1, 1_000),
        ("alt.binaries.i1", 1_001, 2_000),
        ("alt.binaries.i1", 1, 1_000),
    ]


def test_an_unknown_group_is_an_error_that_plans_nothing(news_group):
    group = news_group("alt.binaries.known", 1, 1_000)
    with pytest.raises(UnknownGroups, match=r"alt\.binaries\.nope"):
        plan_ranges([group.name, "alt.binaries.nope"])
    assert SeedRange.objects.count() == 0


def test_a_dry_run_reports_without_writing(news_group):
    group = news_group("alt.binaries.dry", 1, 5_000)
    summary = plan_ranges([group.name], size=1_000, dry_run=True)
    assert summary.ranges == 5 and summary.dry_run
    assert SeedRange.objects.count() == 0


def test_a_running_backfill_hands_the_rest_to_the_plan(news_group):
    group = news_group(
        "alt.binaries.backfill",
        1,
        10_000,
        live_from=9_001,
        backfill_next_id=6_000,
        backfill_until_id=1_000,
    )
    summary = plan_ranges([group.name], size=10_000)
    (plan,) = summary.groups
    assert (plan.low, plan.high) == (1, 6_000)
    assert spans(group) == [(1, 6_000)]
    group.refresh_from_db()
    assert (group.backfill_next_id, group.backfill_until_id) == (6_000, 6_000)
    assert not group.backfill_running
    assert plan_ranges([group.name]).ranges == 0


def test_a_running_backfill_below_the_days_is_taken_over_whole(news_group):
    group = news_group(
        "alt.binaries.deepfill",
        1,
        287_000,
        backfill_next_id=200_000,
        backfill_until_id=1_000,
    )
    summary = plan_ranges([group.name], days=10, size=1_000_000)
    (plan,) = summary.groups
    assert (plan.low, plan.high) == (1_000, 200_000)  # not the 10 days' bottom
    assert spans(group) == [(1_000, 200_000)]
    group.refresh_from_db()
    assert (group.backfill_next_id, group.backfill_until_id) == (200_000, 200_000)


def test_holes_are_planned_like_articles(news_group):
    group = news_group("alt.binaries.holes", 1, 10_000, holes=lambda n: 3_000 <= n < 7_000)
    summary = plan_ranges([group.name], size=5_000)
    assert [(p.low, p.high) for p in summary.groups] == [(1, 10_000)]
    assert spans(group) == [(5_001, 10_000), (1, 5_000)]


def test_a_group_missing_on_the_server_is_reported_not_planned(news, news_group):
    news_group("alt.binaries.here", 1, 1_000)
    GroupFactory(name="alt.binaries.gone")
    summary = plan_ranges(["alt.binaries.here", "alt.binaries.gone"])
    notes = {p.group: p.note for p in summary.groups}
    assert notes["alt.binaries.gone"] == "not on the news server"
    assert summary.ranges == 1


def test_live_indexing_that_began_before_the_server_data_leaves_no_history(news_group):
    group = news_group("alt.binaries.young", 5_000, 6_000, live_from=10)
    summary = plan_ranges([group.name])
    assert summary.ranges == 0


def test_the_tail_plans_what_the_server_has_beyond_the_highest_planned_article(news, news_group):
    group = news_group("alt.binaries.tail", 1, 10_000, live_from=8_001)
    plan_ranges([group.name], size=5_000)
    tail = plan_tail(size=5_000)
    assert tail.groups[0].low == 8_001 and tail.groups[0].high == 10_000
    news.groups[group.name].last = 12_000
    tail = plan_tail(size=5_000)
    assert [(p.low, p.high, p.ranges) for p in tail.groups] == [(10_001, 12_000, 1)]
    tails = SeedRange.objects.filter(priority=10).order_by("id")
    assert list(tails.values_list("start_id", "end_id")) == [(8_001, 10_000), (10_001, 12_000)]
    assert plan_tail().ranges == 0


def test_the_tail_of_an_unplanned_group_starts_where_live_indexing_began(news_group):
    group = news_group("alt.binaries.fresh", 1, 10_000, live_from=9_500)
    tail = plan_tail()
    assert spans(group) == [(9_500, 10_000)]
    assert tail.groups[0].ranges == 1


def test_inactive_groups_get_no_tail(news_group):
    news_group("alt.binaries.off", 1, 100, live_from=50, active=False)
    assert plan_tail().groups == []
