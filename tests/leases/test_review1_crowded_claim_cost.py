"""Review (review1): the crowded range claim's cost must not grow with the queue.

docs/api.md and the specification: "At a million ranges none of these steps scans the
table." Past 2,000 open ranges under live holds the claim asks seed_range_pick_unheld
(leases 0012). Each test measures the claim's shared buffers (deterministic, unlike time)
with a queue of some thousand ranges, adds 30,000 more in the same shape and measures
again: an index probe reads a few blocks more at most, a walk hundreds more.
"""

from __future__ import annotations

import pytest
from django.db import connection

from seeding import services
from tests.factories import GroupFactory, NodeFactory
from tests.leases.test_group_leases import leased

pytestmark = pytest.mark.django_db


def claim_buffers(settings) -> int:
    """Shared buffers one claim reads (EXPLAIN ANALYZE runs it: it claims a range)."""
    node = NodeFactory()
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE seed_range")
        cursor.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)"
            " SELECT * FROM claim_seed_range(%s, %s, %s, %s)",
            [node.id, settings.LEASE_TTL_SECONDS, settings.DEFAULT_PRIORITY, 1],
        )
        plan = cursor.fetchone()[0][0]["Plan"]
    return plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)


def crowd(node_client, **fields):
    """A live history lane that owns more open ranges than the claim walks past."""
    held = GroupFactory()
    services.create_ranges(held, [(i * 10, i * 10 + 9) for i in range(2100)], **fields)
    assert leased(node_client(), "history")["group"]["id"] == held.id
    return held


def spans(first, count):
    return [(first + i * 10, first + i * 10 + 9) for i in range(count)]


def test_a_crowded_claim_under_capture_only_does_not_walk_the_capture_ranges(node_client, settings):
    # LEASE_CAPTURE_ONLY: the history band's capture ranges are lane work; the
    # laneless search's capture band (seed_range_first_laneless) passes every
    # queued capture range of every group before it finds none uncaptured.
    settings.LEASE_CAPTURE_ONLY = True
    crowd(node_client, capture=True)
    free = GroupFactory()
    services.create_ranges(free, spans(1_000_000, 2_000), capture=True)
    small = claim_buffers(settings)
    services.create_ranges(free, spans(2_000_000, 30_000), capture=True)
    large = claim_buffers(settings)
    # an index probe grows by a level of the B-tree at most; a walk by the rows added
    assert large - small < 100, (small, large)


def test_a_crowded_claim_does_not_walk_a_free_lane_to_its_most_urgent_priority(
    node_client, settings
):
    # The free lane's most urgent claimable priority is that of one old range;
    # the lane pick asks for its newest queued range at exactly that priority,
    # walking seed_range_group_start_idx down past every newer range.
    crowd(node_client)
    free = GroupFactory()
    services.create_ranges(free, [(0, 9)], priority=90)
    services.create_ranges(free, spans(1_000_000, 2_000))
    small = claim_buffers(settings)
    # the urgent old range was claimed by the measure: another, as old
    services.create_ranges(free, [(10, 19)], priority=90)
    services.create_ranges(free, spans(2_000_000, 30_000))
    large = claim_buffers(settings)
    # an index probe grows by a level of the B-tree at most; a walk by the rows added
    assert large - small < 100, (small, large)
