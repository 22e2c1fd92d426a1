"""Which lane a group lease hands out: only lanes with work to claim now, by what is left,
ties broken by the turn and then the group's priority (docs/window-indexing.md)."""

from __future__ import annotations

import pytest
from django.db import connection

from leases.models import GroupLane
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane, next_range

pytestmark = pytest.mark.django_db

BY_SIZE, BY_AGE = 1, 0  # odd turns go by size, even turns by age


def next_turn_is(parity):
    """Set group_lane_turn_seq so the next hand-out's turn has this parity."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT setval('group_lane_turn_seq', %s)", [100 + 1 - parity])


def span(group, start, end, next_id=None, **fields):
    return SeedRangeFactory(
        group=group, start_id=start, end_id=end, next_id=start if next_id is None else next_id,
        **fields,
    )  # fmt: skip


def leased_group(client, lane="history"):
    lease = lease_lane(client, lane)["lease"]
    return None if lease is None else lease["group"]["id"]


def read_to_its_end_then_quiet(ranger, rng, backdate, settings):
    """A range lease reads the range to its end, then goes quiet."""
    lease = ranger.lease()
    assert lease["id"] == rng.id
    body = {"epoch": lease["epoch"], "next": rng.end_id + 1, "headers": 10}
    assert ranger.post(f"/api/v1/ranges/{rng.id}/batch", body).status_code == 200
    backdate(rng.id, settings.LEASE_TTL_SECONDS + 1)


def configure(node_client):
    """The first lease of any lane saves the lane bounds for the trigger."""
    lease_lane(node_client(), "tail")


class TestOnlyClaimableWork:
    def test_a_lane_whose_work_is_all_under_live_range_leases_is_not_handed_out(self, node_client):
        configure(node_client)
        busy = GroupFactory()
        for i in range(3):
            span(busy, 1000 + i * 10_000, 10_999 + i * 10_000)
        small = GroupFactory()
        (little,) = [span(small, 1000, 1099)]
        ranger = node_client()
        got = [ranger.lease()["id"] for _ in range(3)]  # the big group's ranges, live
        assert little.id not in got
        next_turn_is(BY_SIZE)
        node = node_client()
        assert leased_group(node) == small.id
        # and no turn offers the busy group's lane: its `next` would answer nothing
        for parity in (BY_SIZE, BY_AGE):
            next_turn_is(parity)
            assert leased_group(node_client()) is None

    def test_by_size_counts_the_articles_left_not_the_whole_span(self, node_client):
        configure(node_client)
        read_mostly = GroupFactory()
        span(read_mostly, 1000, 100_999, next_id=100_900)  # 100 articles left of 100,000
        fresh = GroupFactory()
        span(fresh, 1000, 1999)  # 1,000 left
        next_turn_is(BY_SIZE)
        assert leased_group(node_client()) == fresh.id
        row = GroupLane.objects.get(group=read_mostly, lane="history")
        assert row.claimable_articles == 100

    def test_a_lane_whose_ranges_are_read_to_their_end_is_not_handed_out(
        self, node_client, backdate, settings
    ):
        # A queued range always has articles left (the database refuses one
        # read to its end); a quiet lease read to its end is swept to done.
        configure(node_client)
        group = GroupFactory()
        rng = span(group, 1000, 1999)
        read_to_its_end_then_quiet(node_client(), rng, backdate, settings)
        for parity in (BY_SIZE, BY_AGE):
            next_turn_is(parity)
            assert leased_group(node_client()) is None
        assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE

    def test_a_quiet_range_lease_counts_and_the_lanes_next_gets_it(
        self, node_client, backdate, settings
    ):
        group = GroupFactory()
        (rng,) = [span(group, 1000, 1999)]
        ranger = node_client()
        assert ranger.lease()["id"] == rng.id
        backdate(rng.id, settings.LEASE_TTL_SECONDS + 1)
        node = node_client()
        lease = lease_lane(node)["lease"]
        assert lease is not None and lease["group"]["id"] == group.id
        handed = next_range(node, lease)
        assert handed is not None and handed["id"] == rng.id

    def test_claims_and_finishes_keep_the_claimable_figure(self, node_client):
        configure(node_client)
        group = GroupFactory()
        a = span(group, 1000, 1999, priority=50)
        span(group, 2000, 2999, priority=100)
        row = GroupLane.objects.get(group=group, lane="history")
        assert (row.claimable_articles, row.claimable_priority) == (2000, 50)
        ranger = node_client()
        lease = ranger.lease()
        assert lease["id"] == a.id
        row.refresh_from_db()
        assert (row.claimable_articles, row.claimable_priority) == (1000, 100)
        body = {"epoch": lease["epoch"], "next": 1500, "headers": 500}
        assert ranger.post(f"/api/v1/ranges/{a.id}/batch", body).status_code == 200
        release = ranger.post(f"/api/v1/ranges/{a.id}/release", {"epoch": lease["epoch"]})
        assert release.status_code in (200, 204)
        row.refresh_from_db()
        assert (row.claimable_articles, row.claimable_priority) == (1500, 50)
        # a recount from the ranges agrees with what the trigger kept
        from leases.services import rebuild_lane_work

        rebuild_lane_work()
        row.refresh_from_db()
        assert (row.claimable_articles, row.claimable_priority) == (1500, 50)


class TestTieBreaks:
    @pytest.mark.parametrize("parity", [BY_SIZE, BY_AGE])
    def test_the_groups_priority_breaks_a_tie_of_the_turn(self, node_client, parity):
        configure(node_client)
        later = GroupFactory(priority=200)
        span(later, 1000, 1999)
        sooner = GroupFactory(priority=50)
        span(sooner, 1000, 1999)
        next_turn_is(parity)
        assert leased_group(node_client()) == sooner.id

    @pytest.mark.parametrize("parity", [BY_SIZE, BY_AGE])
    def test_the_last_tie_goes_to_the_lower_group_id_not_the_older_lane_row(
        self, node_client, parity
    ):
        configure(node_client)
        lower = GroupFactory()
        higher = GroupFactory()
        span(higher, 1000, 1999)  # its lane row is made first, so its id is the lower
        span(lower, 1000, 1999)
        rows = dict(GroupLane.objects.filter(lane="history").values_list("group_id", "id"))
        assert lower.id < higher.id and rows[higher.id] < rows[lower.id]
        next_turn_is(parity)
        assert leased_group(node_client()) == lower.id

    def test_the_most_urgent_range_still_comes_before_the_groups_priority(self, node_client):
        configure(node_client)
        urgent_range = GroupFactory(priority=200)
        span(urgent_range, 1000, 1999, priority=50)
        urgent_group = GroupFactory(priority=10)
        span(urgent_group, 1000, 50_999, priority=100)
        for parity in (BY_SIZE, BY_AGE):
            next_turn_is(parity)
            node = node_client()
            lease = lease_lane(node)["lease"]
            assert lease["group"]["id"] == urgent_range.id
            assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code
            GroupLane.objects.filter(group=urgent_range).update(heartbeat_at=None)

    def test_a_group_priority_change_reaches_its_lanes(self, node_client):
        configure(node_client)
        group = GroupFactory(priority=100)
        span(group, 1000, 1999)
        group.priority = 7
        group.save(update_fields=["priority"])
        assert GroupLane.objects.get(group=group, lane="history").group_priority == 7

    def test_unheld_the_longest_runs_from_the_last_heartbeat(self, node_client, settings):
        ttl = settings.LEASE_TTL_SECONDS
        configure(node_client)
        quiet = GroupFactory()
        span(quiet, 1000, 1999)
        released = GroupFactory()
        span(released, 1000, 1999)
        first, second = node_client(), node_client()
        next_turn_is(BY_AGE)
        assert leased_group(first) == quiet.id  # never held, lower id
        lease = lease_lane(second)["lease"]
        assert lease["group"]["id"] == released.id
        second.post(lane_path(lease, "release"), {"epoch": lease["epoch"]})
        with connection.cursor() as cursor:
            # taken long ago, its holder last heard a little past the TTL ago
            cursor.execute(
                "UPDATE group_lane SET last_held_at = now() - make_interval(secs => %s),"
                " heartbeat_at = now() - make_interval(secs => %s) WHERE group_id = %s",
                [ttl * 10, ttl + 5, quiet.id],
            )
            # given back (its holder last heard) twice the TTL ago
            cursor.execute(
                "UPDATE group_lane SET last_held_at = now() - make_interval(secs => %s),"
                " heartbeat_at = now() - make_interval(secs => %s) WHERE group_id = %s",
                [ttl * 2, ttl * 2, released.id],
            )
        next_turn_is(BY_AGE)
        assert leased_group(node_client()) == released.id
        next_turn_is(BY_AGE)
        assert leased_group(node_client()) == quiet.id

    def test_a_release_stamps_the_heartbeat(self, node_client, settings):
        group = GroupFactory()
        span(group, 1000, 1999)
        node = node_client()
        lease = lease_lane(node)["lease"]
        GroupLane.objects.filter(group=group).update(heartbeat_at=None)
        assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code == 204
        assert GroupLane.objects.get(group=group, lane="history").heartbeat_at is not None


class TestNoEmptySpans:
    def test_a_lanes_next_skips_a_range_read_to_its_end(self, node_client, backdate, settings):
        group = GroupFactory()
        read_to_its_end_then_quiet(node_client(), span(group, 1000, 1999), backdate, settings)
        second = span(group, 2000, 2999)
        node = node_client()
        lease = lease_lane(node)["lease"]
        handed = next_range(node, lease)
        assert handed is not None and handed["id"] == second.id
        assert handed["next"] <= handed["end"]

    def test_releasing_a_lane_whose_range_is_read_to_its_end_makes_it_done(self, node_client):
        group = GroupFactory()
        (rng,) = [span(group, 1000, 1999)]
        node = node_client()
        lease = lease_lane(node)["lease"]
        handed = next_range(node, lease)
        body = {"epoch": handed["epoch"], "next": 2000, "headers": 1000}
        assert node.post(f"/api/v1/ranges/{rng.id}/batch", body).status_code == 200
        assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code == 204
        assert SeedRange.objects.get(id=rng.id).status == RangeStatus.DONE
