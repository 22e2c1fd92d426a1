"""A lane's `next` naming the range read to its end (issue 27: the agent pipelines).

The agent asks for the lane's next range while the last batch of the range it has
read is in flight, and finishes that range once the batch is answered. The range
read stays leased to it meanwhile, fenced by its own epoch; a holder that dies
between that batch and its finish loses nothing to the next holder's takeover.
Over real HTTP requests against PostgreSQL.
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from leases import services
from leases.models import GroupLane
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane

pytestmark = pytest.mark.django_db


def two_ranges():
    group = GroupFactory()
    first = SeedRangeFactory(group=group, start_id=1000, end_id=1999, next_id=1000)
    second = SeedRangeFactory(group=group, start_id=2000, end_id=2999, next_id=2000)
    return group, first, second


def leased(client):
    body = lease_lane(client)
    assert body["lease"] is not None, body
    return body["lease"]


def ask_next(client, lease, **body):
    response = client.post(lane_path(lease, "next"), {"epoch": lease["epoch"], **body})
    assert response.status_code == 200, response.content
    return response.json()["range"]


def last_batch(client, rng, epoch, headers=900):
    body = {"epoch": epoch, "next": rng.end_id + 1, "headers": headers}
    return client.post(f"/api/v1/ranges/{rng.id}/batch", body)


def test_next_naming_the_range_read_hands_out_the_following_one_while_it_finishes(node_client):
    group, first, second = two_ranges()
    node = node_client()
    lease = leased(node)
    handed = ask_next(node, lease)
    assert handed["id"] == first.id

    following = ask_next(node, lease, read=first.id)  # the last batch still in flight

    assert following["id"] == second.id
    first.refresh_from_db()
    assert (first.status, first.node_id) == (RangeStatus.LEASED, node.node.id)
    # A retried call (its answer lost) gets the same range, nothing more leased.
    assert ask_next(node, lease, read=first.id) == following
    # The range read still takes its last batch and its finish, by its own epoch.
    assert last_batch(node, first, handed["epoch"]).status_code == 200
    finished = node.post(f"/api/v1/ranges/{first.id}/finish", {"epoch": handed["epoch"]})
    assert finished.status_code == 204
    row = GroupLane.objects.get(group=group, lane="history")
    assert (row.ranges_done, row.headers, row.range_id) == (1, 900, second.id)
    assert SeedRange.objects.get(id=first.id).status == RangeStatus.DONE


def test_next_naming_a_range_not_in_work_answers_the_range_in_work(node_client):
    _group, first, second = two_ranges()
    node = node_client()
    lease = leased(node)
    assert ask_next(node, lease)["id"] == first.id
    assert ask_next(node, lease, read=second.id)["id"] == first.id


@pytest.mark.parametrize("read", [0, -1, "seven", 2**70, 1.5])
def test_a_bad_read_is_a_400_that_says_so(node_client, read):
    _group, first, _second = two_ranges()
    node = node_client()
    lease = leased(node)
    ask_next(node, lease)
    response = node.post(lane_path(lease, "next"), {"epoch": lease["epoch"], "read": read})
    assert response.status_code == 400
    assert "read" in response.json()["detail"]
    first.refresh_from_db()
    assert first.status == RangeStatus.LEASED  # nothing changed


class TestAHolderDeadBetweenItsLastBatchAndTheFinish:
    """The holder asked `next` naming the range it read, then died before finishing it.

    The range's own heartbeat went on a moment longer than the lane's (the agent
    heartbeats both), so the range is not quiet yet when the lane is taken over:
    the takeover still resets it with the range in work, as the last holder's.
    """

    def die_after_next(self, node_client, backdate_lane, settings, *, answered):
        group, first, second = two_ranges()
        SeedRangeFactory(group=group, start_id=3000, end_id=3999, next_id=3000)  # work left
        dead = node_client()
        lease = leased(dead)
        handed = ask_next(dead, lease)
        if answered:
            assert last_batch(dead, first, handed["epoch"]).status_code == 200
        else:
            body = {"epoch": handed["epoch"], "next": 1500, "headers": 400}
            assert dead.post(f"/api/v1/ranges/{first.id}/batch", body).status_code == 200
        assert ask_next(dead, lease, read=first.id)["id"] == second.id
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        taker = node_client()
        assert leased(taker)["group"]["id"] == group.id
        return taker, first, second

    def test_a_range_whose_last_batch_was_answered_is_done(
        self, node_client, backdate_lane, settings
    ):
        _taker, first, second = self.die_after_next(
            node_client, backdate_lane, settings, answered=True
        )
        first.refresh_from_db()
        assert (first.status, first.next_id, first.headers) == (RangeStatus.DONE, 2000, 900)
        second.refresh_from_db()
        assert (second.status, second.next_id) == (RangeStatus.QUEUED, 2000)

    def test_a_range_whose_last_batch_was_not_answered_is_read_again_from_its_resume_point(
        self, node_client, backdate_lane, settings
    ):
        taker, first, _second = self.die_after_next(
            node_client, backdate_lane, settings, answered=False
        )
        first.refresh_from_db()
        assert (first.status, first.next_id, first.node_id) == (RangeStatus.QUEUED, 1500, None)
        lease = GroupLane.objects.get(group=first.group, lane="history")
        again = ask_next(
            taker, {"group": {"id": first.group_id}, "lane": "history", "epoch": lease.epoch}
        )
        assert (again["id"], again["next"]) == (first.id, 1500)


class TestALaneGivenBackAfterNextNamedTheRangeRead:
    """The lane is given back (its holder, or an operator) after `next` with `read=N`
    moved it on: range N, still leased to the holder from the lane's window, goes back
    too, at once and in window order, not left leased until its TTL."""

    def moved_on(self, node_client, *, answered):
        _group, first, second = two_ranges()
        node = node_client()
        lease = leased(node)
        handed = ask_next(node, lease)
        if answered:
            assert last_batch(node, first, handed["epoch"]).status_code == 200
        else:
            body = {"epoch": handed["epoch"], "next": 1500, "headers": 400}
            assert node.post(f"/api/v1/ranges/{first.id}/batch", body).status_code == 200
        assert ask_next(node, lease, read=first.id)["id"] == second.id
        return node, lease, first, second

    def test_the_holders_release_frees_the_range_read_and_the_range_in_work(self, node_client):
        node, lease, first, second = self.moved_on(node_client, answered=False)
        release = node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]})
        assert release.status_code in (200, 204), release.content
        first.refresh_from_db()
        assert (first.status, first.next_id, first.node_id) == (RangeStatus.QUEUED, 1500, None)
        second.refresh_from_db()
        assert (second.status, second.node_id) == (RangeStatus.QUEUED, None)
        # The next holder's window starts with it, in order.
        taker = node_client()
        again = leased(taker)
        assert (ask_next(taker, again)["id"], ask_next(taker, again)["id"]) == (first.id, first.id)

    def test_an_operators_release_frees_it_and_one_read_to_its_end_is_done(self, node_client):
        _node, _lease, first, second = self.moved_on(node_client, answered=True)
        lane = GroupLane.objects.get(group=first.group, lane="history")
        assert services.force_release_lanes([lane.id]) == 1
        first.refresh_from_db()
        assert (first.status, first.next_id, first.error) == (RangeStatus.DONE, 2000, "")
        second.refresh_from_db()
        assert (second.status, second.node_id) == (RangeStatus.QUEUED, None)

    def test_a_range_leased_by_a_range_lease_since_stays_its_holders(self, node_client):
        """Only the lane's hand-outs at their epoch: a range lease of the same node on the
        same group is not the lane's to give back."""
        node, lease, first, _second = self.moved_on(node_client, answered=False)
        third = SeedRangeFactory(
            group=first.group, start_id=5000, end_id=5999, next_id=5000,
            status=RangeStatus.LEASED, node=node.node, heartbeat_at=timezone.now(),
        )  # fmt: skip
        assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code < 300
        third.refresh_from_db()
        assert (third.status, third.node_id) == (RangeStatus.LEASED, node.node.id)
