"""Claims under contention: many connections, no range handed out twice."""

from __future__ import annotations

from collections import Counter
from functools import partial

import pytest
from django.db import connection

from seeding.models import RangeStatus, SeedRange
from seeding.services import create_ranges, lease_range
from tests.support.factories import GroupFactory, NodeFactory
from tests.support.threads import run_threads

THREADS = 32
RANGES = 2000


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_32_connections_lease_2000_ranges_and_each_is_leased_exactly_once(settings):
    # Each node holds ~60 leases here, fast: the per-node cap and rate are
    # tested in tests/security/test_lease_limits.py.
    settings.LEASE_MAX_PER_NODE = 0
    settings.LEASE_RATE_PER_MINUTE = 0
    group = GroupFactory(name="alt.binaries.contention")
    create_ranges(group, [(i * 100, i * 100 + 99) for i in range(RANGES)])
    nodes = [NodeFactory() for _ in range(THREADS)]

    def lease_until_none_is_left(node_id: int) -> list[int]:
        ids: list[int] = []
        while True:
            offer = lease_range(node_id)
            if offer.lease is None:
                return ids
            ids.append(offer.lease.id)

    claimed = run_threads([partial(lease_until_none_is_left, node.id) for node in nodes])
    everything = [rid for ids in claimed for rid in ids]
    duplicates = [rid for rid, n in Counter(everything).items() if n > 1]
    assert duplicates == []
    assert len(everything) == RANGES
    assert sum(1 for ids in claimed if ids) > 1, "the work should spread over connections"
    leased = SeedRange.objects.filter(status=RangeStatus.LEASED)
    assert leased.count() == RANGES
    assert set(leased.values_list("epoch", flat=True)) == {1}
    by_node = Counter(SeedRange.objects.values_list("node_id", flat=True))
    for index, ids in enumerate(claimed):
        assert by_node.get(nodes[index].id, 0) == len(ids)


@pytest.mark.django_db
def test_the_urgency_mix_alternates_and_a_tie_goes_to_urgent(settings):
    group = GroupFactory(name="alt.binaries.mix")
    # Planned first (lower ids), yet the rest go by priority: 100 before 200.
    create_ranges(group, [(i * 10, i * 10 + 9) for i in range(30)], priority=200)
    create_ranges(
        group,
        [(1000 + i * 10, 1000 + i * 10 + 9) for i in range(30)],
        priority=settings.DEFAULT_PRIORITY,
    )
    create_ranges(
        group,
        [(5000 + i * 10, 5000 + i * 10 + 9) for i in range(30)],
        priority=settings.TAIL_PRIORITY,
    )
    node = NodeFactory()
    priorities = []
    for _ in range(40):
        lease = lease_range(node.id).lease
        assert lease is not None
        priorities.append(SeedRange.objects.get(id=lease.id).priority)
    # Urgent first while 2 * urgent < live + 1: none live, then one urgent of
    # one (rest), one of two (a tie: urgent), two of three (rest), ...
    assert priorities == [settings.TAIL_PRIORITY, settings.DEFAULT_PRIORITY] * 20


@pytest.mark.django_db
def test_the_urgency_mix_counts_range_leases_not_a_lanes_ranges(settings, node_client):
    from tests.support.lanes import lease_lane, next_range

    windows = []
    for g in range(3):
        group = GroupFactory(name=f"alt.binaries.tail{g}")
        create_ranges(group, [(1000, 1999)], priority=settings.TAIL_PRIORITY)
        worker = node_client()
        lease = lease_lane(worker, "tail")["lease"]
        assert lease["group"]["id"] == group.id
        windows.append(next_range(worker, lease))
    assert all(windows)  # three urgent ranges live, each under a lane's window
    ranged = GroupFactory(name="alt.binaries.ranged")
    create_ranges(ranged, [(1000, 1999)], priority=settings.TAIL_PRIORITY)
    create_ranges(ranged, [(5000, 5999)], priority=settings.DEFAULT_PRIORITY)
    node = NodeFactory()
    got = [lease_range(node.id).lease for _ in range(2)]
    assert [lease.start for lease in got if lease] == [1000, 5000]


@pytest.mark.django_db
def test_urgent_ranges_all_go_first_when_nothing_else_is_live(settings):
    group = GroupFactory(name="alt.binaries.urgent")
    create_ranges(group, [(i * 10, i * 10 + 9) for i in range(5)], priority=settings.TAIL_PRIORITY)
    create_ranges(group, [(1000 + i * 10, 1000 + i * 10 + 9) for i in range(5)])
    node = NodeFactory()
    first = lease_range(node.id).lease
    assert first is not None and first.start < 1000
    # Finishing keeps the live set empty, so the next urgent range goes first again.
    with connection.cursor() as cursor:
        cursor.execute("UPDATE seed_range SET status = 'done' WHERE id = %s", [first.id])
    second = lease_range(node.id).lease
    assert second is not None and second.start < 1000


@pytest.mark.django_db
def test_when_only_normal_ranges_remain_they_are_handed_out(settings):
    group = GroupFactory(name="alt.binaries.normal")
    create_ranges(group, [(i * 10, i * 10 + 9) for i in range(3)])
    node = NodeFactory()
    assert [lease_range(node.id).lease is not None for _ in range(4)] == [True, True, True, False]
