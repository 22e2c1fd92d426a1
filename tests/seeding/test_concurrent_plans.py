"""Two plans at once never insert overlapping ranges (the advisory lock)."""

from __future__ import annotations

import itertools

import pytest

from seeding.models import SeedRange
from seeding.planning import plan_ranges, plan_tail
from tests.support.threads import run_threads

pytestmark = pytest.mark.django_db(transaction=True)


def assert_no_overlap():
    by_group: dict[int, list[tuple[int, int]]] = {}
    for gid, start, end in SeedRange.objects.values_list("group_id", "start_id", "end_id"):
        by_group.setdefault(gid, []).append((start, end))
    for spans in by_group.values():
        spans.sort()
        for (_, end), (start, _) in itertools.pairwise(spans):
            assert end < start, spans


@pytest.mark.slow
def test_two_plans_at_once_do_not_overlap(news_group):
    group = news_group("alt.binaries.race", 1, 40_000, live_from=35_001)
    results = run_threads([lambda: plan_ranges([group.name], size=1_000)] * 2)
    assert sorted(r.ranges for r in results) == [0, 35]
    assert SeedRange.objects.count() == 35
    assert_no_overlap()


@pytest.mark.slow
def test_a_plan_and_the_tail_at_once_do_not_overlap(news_group):
    news_group("alt.binaries.race2", 1, 20_000, live_from=10_001)
    results = run_threads(
        [
            lambda: plan_ranges(["alt.binaries.race2"], size=3_000, priority=50),
            lambda: plan_tail(size=3_000),
            lambda: plan_ranges(["alt.binaries.race2"], size=700),
        ]
    )
    assert len(results) == 3
    assert_no_overlap()
    covered = sum(e - s + 1 for s, e in SeedRange.objects.values_list("start_id", "end_id"))
    assert covered == 20_000
