"""The crowded range claim reads a bounded number of blocks, however long the queue.

Past 2,000 open ranges under live holds the claim asks seed_range_pick_unheld
(docs/window-indexing.md, "The two protocols side by side"); docs/performance.md says what
one such claim reads. Each test measures the claim's shared buffers (deterministic, unlike
time) with a queue of some thousand ranges, adds 30,000 more in the same shape and measures
again: an index probe reads a few blocks more at most, a walk hundreds more.

The tests commit (transaction=True) so that each measure can VACUUM first: the rows earlier
tests rolled back stay in the indexes as dead entries until a vacuum, and the page counts
an ANALYZE wrote survive a rollback; either would move the plans and the counts of both
measures alike, hiding a walk in a large baseline.
"""

from __future__ import annotations

import pytest
from django.db import connection, transaction

from seeding import services
from tests.leases.test_group_leases import leased
from tests.support.factories import GroupFactory, NodeFactory

pytestmark = pytest.mark.django_db(transaction=True)


def claim_buffers(settings) -> int:
    """Shared buffers one claim reads (EXPLAIN ANALYZE runs it: it claims a range)."""
    node = NodeFactory()
    claim = "SELECT * FROM claim_seed_range(%s, %s, %s, %s)"
    args = [node.id, settings.LEASE_TTL_SECONDS, settings.DEFAULT_PRIORITY, 1]
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) seed_range")
        # A claim undone first plans the function's statements (the ANALYZE made
        # them plan again), so the measure counts the rows read, not the catalog.
        with transaction.atomic():
            cursor.execute(claim, args)
            transaction.set_rollback(True)
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + claim, args)
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
    # laneless search's capture band (seed_range_first_laneless) looks for an
    # uncaptured one, and must not pass every queued capture range to find none.
    settings.LEASE_CAPTURE_ONLY = True
    crowd(node_client, capture=True)
    free = GroupFactory()
    services.create_ranges(free, spans(1_000_000, 2_000), capture=True)
    small = claim_buffers(settings)
    services.create_ranges(free, spans(2_000_000, 30_000), capture=True)
    large = claim_buffers(settings)
    # an index probe grows by a level of the B-tree at most; a walk by the rows added
    assert large - small < 100, (small, large)


def test_a_crowded_claim_does_not_walk_the_capture_ranges_while_uncaptured_ones_wait_above(
    node_client, settings
):
    # Half the queue uncaptured (above LEASE_PRIORITY_MAX, so of no lane) tells
    # the planner that half of any band is uncaptured: the claim index looks as
    # good for the capture band. And the free lane's one priority is 30,000
    # ranges: a pick that reads them all before sorting is a walk too.
    settings.LEASE_CAPTURE_ONLY = True
    settings.LEASE_PRIORITY_MAX = 200
    crowd(node_client, capture=True)
    free = GroupFactory()
    services.create_ranges(free, spans(1_000_000, 2_000), capture=True)
    services.create_ranges(GroupFactory(), spans(1_000_000, 32_000), priority=500)
    small = claim_buffers(settings)
    services.create_ranges(free, spans(2_000_000, 30_000), capture=True)
    large = claim_buffers(settings)
    assert large - small < 100, (small, large)


def test_a_crowded_claim_does_not_walk_a_free_lane_to_its_most_urgent_priority(
    node_client, settings
):
    # The free lane's most urgent claimable priority is that of one old range;
    # the lane pick asks for its newest queued range at exactly that priority,
    # and must not pass every newer range of the group's other priorities.
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


def add_free_lanes(first: int, count: int) -> int:
    """`count` new groups of one queued range each (a free history lane each); the
    lanes with claimable work after."""
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO news_group (name, active, priority, created_at)"
            " SELECT 'alt.binaries.free.' || g, true, 100, now()"
            "   FROM generate_series(%s::integer, %s::integer) AS g",
            [first, first + count - 1],
        )
        cursor.execute(
            "INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority,"
            "                        capture, epoch, attempts, headers, files, fragments,"
            "                        error, created_at)"
            " SELECT g.id, 1, 1000, 1, 'queued', 100, false, 0, 0, 0, 0, 0, '', now()"
            "   FROM news_group AS g WHERE g.name LIKE 'alt.binaries.free.%%'"
            "    AND NOT EXISTS (SELECT 1 FROM seed_range AS r WHERE r.group_id = g.id)"
        )
        cursor.execute("VACUUM ANALYZE group_lane")
        cursor.execute("VACUUM ANALYZE group_lane_work")
        cursor.execute("SELECT count(*) FROM group_lane WHERE claimable_priority IS NOT NULL")
        return int(cursor.fetchone()[0])


def test_a_crowded_claim_does_not_read_the_work_of_every_free_lane(node_client, settings):
    # A free lane's most urgent claimable priority is on its group_lane row: the
    # claim takes the free lanes in claim order from an index and stops at the
    # first that answers, rather than grouping every free lane's work rows (with
    # 10,000 groups 40,000 rows, 40-70 ms a claim while any lane was held).
    crowd(node_client)
    assert add_free_lanes(1, 200) >= 200
    small = claim_buffers(settings)
    assert add_free_lanes(201, 6_000) >= 6_000
    large = claim_buffers(settings)
    assert large - small < 100, (small, large)
