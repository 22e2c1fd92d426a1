"""Many nodes leasing group lanes at once never hold one group's lane twice."""

from __future__ import annotations

from collections import Counter
from functools import partial

import pytest
from django.db import connection

from leases import services
from seeding.models import SeedRange
from seeding.services import lease_range
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.threads import run_threads

NODES = 16
GROUPS = 200
ROUNDS = 5


def plan(groups: int) -> list[int]:
    ids = []
    rows = []
    for i in range(groups):
        group = GroupFactory(name=f"alt.binaries.race{i}")
        ids.append(group.id)
        rows += [
            SeedRangeFactory.build(group=group, start_id=s, end_id=s + 999, next_id=s, priority=100)
            for s in (1000, 2000)
        ]
    SeedRange.objects.bulk_create(rows)
    return ids


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_sixteen_nodes_leasing_among_200_groups_never_share_a_lane():
    plan(GROUPS)
    nodes = [NodeFactory() for _ in range(NODES)]

    def lease_some(index: int) -> list[tuple[int, str]]:
        held = []
        for _ in range(ROUNDS):
            offer = services.lease_lane(nodes[index].id, "history")
            assert offer.lease is not None
            held.append((offer.lease.group.id, offer.lease.lane))
            services.next_lane_range(
                nodes[index].id, offer.lease.group.id, "history", offer.lease.epoch
            )
        return held

    results = run_threads([partial(lease_some, i) for i in range(NODES)])
    handed = Counter(pair for held in results for pair in held)
    assert sum(handed.values()) == NODES * ROUNDS
    assert max(handed.values()) == 1, handed.most_common(3)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM group_lane WHERE node_id IS NOT NULL AND lane = 'history'"
        )
        assert cursor.fetchone()[0] == NODES * ROUNDS
        cursor.execute(
            "SELECT id, count(*) FROM seed_range WHERE status = 'leased' GROUP BY id HAVING count(*) > 1"
        )
        assert cursor.fetchall() == []


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_range_leases_and_lane_next_never_hand_one_range_to_two_holders():
    group_ids = plan(20)
    lane_nodes = [NodeFactory() for _ in range(8)]
    range_nodes = [NodeFactory() for _ in range(8)]

    def work(index: int) -> list[int]:
        got = []
        if index < 8:
            node = lane_nodes[index]
            offer = services.lease_lane(node.id, "history")
            if offer.lease is not None:
                handed = services.next_lane_range(
                    node.id, offer.lease.group.id, "history", offer.lease.epoch
                )
                if handed is not None:
                    got.append(handed.id)
        else:
            node = range_nodes[index - 8]
            for _ in range(3):
                lease = lease_range(node.id).lease
                if lease is not None:
                    got.append(lease.id)
        return got

    results = run_threads([partial(work, i) for i in range(16)])
    taken = Counter(range_id for got in results for range_id in got)
    assert taken and max(taken.values()) == 1
    leased = SeedRange.objects.filter(status="leased", group_id__in=group_ids).count()
    assert leased == sum(taken.values())
