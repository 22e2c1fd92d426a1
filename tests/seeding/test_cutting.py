"""uncovered() and cut(): the planned ranges cover exactly the gaps, newest first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from seeding.planning import cut, interleave, uncovered


@st.composite
def disjoint_spans(draw: st.DrawFn) -> list[tuple[int, int]]:
    points = sorted(draw(st.sets(st.integers(0, 2_000), max_size=20)))
    pairs = list(zip(points[::2], points[1::2], strict=False))
    return draw(st.permutations(pairs))


def articles(spans: list[tuple[int, int]]) -> set[int]:
    return {n for start, end in spans for n in range(start, end + 1)}


@pytest.mark.slow
@given(disjoint_spans(), st.integers(0, 2_100), st.integers(0, 2_100), st.integers(1, 300))
def test_ranges_cover_exactly_what_no_earlier_range_covers(existing, low, high, size):
    gaps = uncovered(existing, low, high)
    ranges = cut(gaps, size)
    wanted = set(range(low, high + 1)) - articles(existing)
    assert articles(ranges) == wanted
    assert sum(end - start + 1 for start, end in ranges) == len(wanted)  # no overlap
    assert not articles(ranges) & articles(existing)
    assert all(1 <= end - start + 1 <= size for start, end in ranges)
    assert ranges == sorted(ranges, reverse=True)  # newest first
    assert gaps == sorted(gaps, reverse=True)
    # Gaps are maximal: neighbours are covered or outside low..high.
    for start, end in gaps:
        assert start == low or start - 1 in articles(existing)
        assert end == high or end + 1 in articles(existing)


@pytest.mark.slow
@given(st.lists(st.lists(st.tuples(st.integers(), st.integers()), max_size=5), max_size=5))
def test_interleaving_takes_one_range_per_group_in_turn(per_group):
    order = list(interleave(per_group))
    assert sorted(order) == sorted((i, r) for i, rs in enumerate(per_group) for r in rs)
    for index, ranges in enumerate(per_group):
        assert [r for i, r in order if i == index] == list(ranges)
    rounds = [sum(1 for j, _ in order[:k] if j == i) for k, (i, _) in enumerate(order)]
    assert rounds == sorted(rounds)


def test_a_gap_is_cut_from_its_top():
    assert cut([(1, 10)], 4) == [(7, 10), (3, 6), (1, 2)]
    assert uncovered([(3, 4), (8, 20)], 1, 10) == [(5, 7), (1, 2)]
    assert uncovered([], 5, 4) == []
