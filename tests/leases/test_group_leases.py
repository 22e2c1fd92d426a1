"""The group-lease protocol (window indexing) over real HTTP requests against PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection

from leases.models import GroupLane
from seeding import services
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane, next_range
from tests.support.snapshots import window_snapshot

pytestmark = pytest.mark.django_db


def ranges_of(group, count, start=1000, size=1000, **kwargs):
    return [
        SeedRangeFactory(
            group=group,
            start_id=start + i * size,
            end_id=start + (i + 1) * size - 1,
            next_id=start + i * size,
            **kwargs,
        )
        for i in range(count)
    ]


def leased(client, lane="history"):
    body = lease_lane(client, lane)
    assert body["lease"] is not None, body
    return body["lease"]


class TestLease:
    def test_a_lease_hands_out_a_groups_lane_with_rules_and_no_snapshot(self, node_client):
        group = GroupFactory(priority=40)
        ranges_of(group, 2)
        node = node_client()
        body = lease_lane(node)
        assert body["retry_after"] is None
        assert body["paused"] is None
        lease = body["lease"]
        assert lease["group"] == {"id": group.id, "name": group.name, "priority": 40}
        assert lease["lane"] == "history"
        assert lease["epoch"] == 1
        assert lease["rules"]["version"] >= 1
        assert lease["snapshot"] is None
        row = GroupLane.objects.get(group=group, lane="history")
        assert row.node_id == node.node.id
        assert row.last_held_at is not None

    def test_nothing_to_lease_says_when_to_retry(self, node_client):
        body = lease_lane(node_client())
        assert body == {"lease": None, "retry_after": body["retry_after"], "paused": None}
        assert body["retry_after"] > 0

    def test_a_bad_lane_is_a_400(self, node_client):
        response = node_client().post("/api/v1/groups/lease", {"lane": "middle"})
        assert response.status_code == 400
        assert response.json()["error"] == "invalid"
        assert "lane" in response.json()["detail"]

    def test_lanes_split_a_groups_ranges_by_priority(self, node_client, settings):
        group = GroupFactory()
        history = ranges_of(group, 1, start=1000)[0]
        tail = ranges_of(group, 1, start=90_000, priority=settings.TAIL_PRIORITY)[0]
        node = node_client()
        history_lease = leased(node, "history")
        tail_lease = leased(node, "tail")
        assert history_lease["group"]["id"] == tail_lease["group"]["id"] == group.id
        assert next_range(node, history_lease)["id"] == history.id
        assert next_range(node, tail_lease)["id"] == tail.id
        assert next_range(node, history_lease)["id"] == history.id  # own range in work

    def test_the_history_lane_keeps_within_the_priority_bounds_and_capture(
        self, node_client, settings
    ):
        group = GroupFactory()
        outside = ranges_of(group, 1, start=1000, priority=500)[0]
        plain = ranges_of(group, 1, start=5000, priority=100)[0]
        capture = ranges_of(group, 1, start=9000, priority=100, capture=True)[0]
        settings.LEASE_PRIORITY_MAX = 200
        settings.LEASE_CAPTURE_ONLY = True
        node = node_client()
        lease = leased(node)
        assert next_range(node, lease)["id"] == capture.id
        SeedRange.objects.filter(id=capture.id).update(status="done", next_id=capture.end_id + 1)
        assert next_range(node, lease) is None
        assert SeedRange.objects.get(id=outside.id).status == RangeStatus.QUEUED
        assert SeedRange.objects.get(id=plain.id).status == RangeStatus.QUEUED

    def test_the_group_with_the_most_urgent_range_goes_first(self, node_client):
        big = GroupFactory()
        ranges_of(big, 5, priority=100)
        urgent = GroupFactory()
        ranges_of(urgent, 1, priority=50)
        assert leased(node_client())["group"]["id"] == urgent.id

    def test_turns_alternate_between_most_planned_and_unheld_longest(self, node_client):
        small_b = GroupFactory()
        ranges_of(small_b, 1)
        small_c = GroupFactory()
        ranges_of(small_c, 1)
        big = GroupFactory()
        ranges_of(big, 10)
        node = node_client()
        picks = []
        for _ in range(6):
            lease = leased(node)
            picks.append(lease["group"]["id"])
            response = node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]})
            assert response.status_code == 204
        big_turns = [i for i, gid in enumerate(picks) if gid == big.id]
        assert big_turns in ([0, 2, 4], [1, 3, 5]), picks
        others = [gid for gid in picks if gid != big.id]
        # never held first (by id), then the one given back the longest ago
        assert others == [small_b.id, small_c.id, small_b.id], picks

    def test_a_held_lane_is_not_handed_out_twice(self, node_client):
        group = GroupFactory()
        ranges_of(group, 3)
        assert leased(node_client())["group"]["id"] == group.id
        assert lease_lane(node_client())["lease"] is None

    def test_the_history_lane_pauses_while_the_catalog_is_full(self, node_client, settings):
        group = GroupFactory()
        ranges_of(group, 1)
        ranges_of(group, 1, start=90_000, priority=5)
        settings.CATALOG_MAX_BYTES = 1024  # the empty catalog's tables already pass it
        node = node_client()
        body = lease_lane(node, "history")
        assert body["lease"] is None
        assert "CATALOG_MAX_BYTES" in body["paused"]
        assert body["retry_after"] > 0
        assert not GroupLane.objects.filter(node__isnull=False).exists()
        assert lease_lane(node, "tail")["lease"]["group"]["id"] == group.id

    def test_both_lanes_pause_while_the_database_is_over_its_limit(self, node_client, settings):
        group = GroupFactory()
        ranges_of(group, 1)
        ranges_of(group, 1, start=90_000, priority=5)
        settings.DB_MAX_BYTES = 1024
        node = node_client()
        for lane in ("history", "tail"):
            body = lease_lane(node, lane)
            assert body["lease"] is None
            assert "DB_MAX_BYTES" in body["paused"]
        assert not GroupLane.objects.filter(node__isnull=False).exists()

    def test_inactive_groups_are_not_handed_out(self, node_client):
        group = GroupFactory(active=False)
        ranges_of(group, 1)
        assert lease_lane(node_client())["lease"] is None


class TestNext:
    def test_next_hands_out_the_lanes_ranges_in_article_order(self, node_client):
        group = GroupFactory()
        first, second = ranges_of(group, 2)
        SeedRange.objects.filter(id=first.id).update(next_id=first.start_id + 10)
        node = node_client()
        lease = leased(node)
        handed = next_range(node, lease)
        assert handed == {
            "id": first.id,
            "start": first.start_id,
            "end": first.end_id,
            "next": first.start_id + 10,
            "epoch": 1,
        }
        first.refresh_from_db()
        assert first.status == RangeStatus.LEASED
        assert first.node_id == node.node.id
        assert first.attempts == 1
        assert first.rule_version is not None
        # The range protocol finishes it and counts it on the lane.
        response = node.post(
            f"/api/v1/ranges/{first.id}/batch", {"epoch": 1, "next": 1500, "headers": 7}
        )
        assert response.status_code == 200
        assert node.post(f"/api/v1/ranges/{first.id}/finish", {"epoch": 1}).status_code == 204
        assert next_range(node, lease)["id"] == second.id
        row = GroupLane.objects.get(group=group, lane="history")
        assert (row.ranges_done, row.headers, row.range_id) == (1, 7, second.id)

    def test_next_is_null_when_the_lane_is_caught_up(self, node_client):
        group = GroupFactory()
        (only,) = ranges_of(group, 1)
        node = node_client()
        lease = leased(node)
        handed = next_range(node, lease)
        node.post(f"/api/v1/ranges/{only.id}/finish", {"epoch": handed["epoch"]})
        assert next_range(node, lease) is None

    def test_next_skips_a_range_under_a_live_range_lease(self, node_client):
        group = GroupFactory()
        first, second = ranges_of(group, 2)
        ranger = node_client()
        assert ranger.lease()["id"] == first.id  # the range protocol took it first
        node = node_client()
        lease = leased(node)
        assert next_range(node, lease)["id"] == second.id
        first.refresh_from_db()
        assert first.node_id == ranger.node.id

    def test_missing_epoch_is_a_400_and_an_unknown_group_a_404(self, node_client):
        node = node_client()
        response = node.post("/api/v1/groups/999999/lanes/history/next", {})
        assert response.status_code == 400
        assert "epoch" in response.json()["detail"]
        for group_id in (999999, 2**70):  # past bigint too: a 404, not an overflow
            response = node.post(f"/api/v1/groups/{group_id}/lanes/history/next", {"epoch": 1})
            assert response.status_code == 404
            assert response.json() == {
                "error": "not_found",
                "detail": f"Group {group_id} does not exist.",
            }
        response = node.post("/api/v1/groups/1/lanes/sideways/next", {"epoch": 1})
        assert response.status_code == 400

    def test_another_nodes_lane_is_a_409(self, node_client):
        group = GroupFactory()
        ranges_of(group, 1)
        lease = leased(node_client())
        other = node_client()
        for action in ("next", "heartbeat", "release"):
            response = other.post(lane_path(lease, action), {"epoch": lease["epoch"]})
            assert response.status_code == 409, action
            assert response.json()["error"] == "lease_lost"


class TestHeartbeatAndRelease:
    def test_a_heartbeat_keeps_the_lane(self, node_client, backdate_lane, settings):
        group = GroupFactory()
        ranges_of(group, 1)
        node = node_client()
        lease = leased(node)
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS - 5)
        assert (
            node.post(lane_path(lease, "heartbeat"), {"epoch": lease["epoch"]}).status_code == 204
        )
        assert lease_lane(node_client())["lease"] is None

    def test_release_queues_the_range_in_work_at_its_resume_point(self, node_client):
        group = GroupFactory()
        (rng,) = ranges_of(group, 1)
        node = node_client()
        lease = leased(node)
        handed = next_range(node, lease)
        node.post(
            f"/api/v1/ranges/{rng.id}/batch", {"epoch": handed["epoch"], "next": 1400, "headers": 1}
        )
        assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code == 204
        rng.refresh_from_db()
        assert (rng.status, rng.next_id, rng.node_id) == (RangeStatus.QUEUED, 1400, None)
        row = GroupLane.objects.get(group=group, lane="history")
        assert row.node_id is None and row.range_id is None
        # released twice: the lane is not this node's any more
        assert node.post(lane_path(lease, "release"), {"epoch": lease["epoch"]}).status_code == 409


class TestTakeover:
    def test_a_quiet_lane_passes_on_and_the_stale_holder_is_fenced(
        self, node_client, backdate_lane, backdate, settings, snapshot_dir
    ):
        group = GroupFactory()
        first, _second = ranges_of(group, 2)
        stale = node_client()
        old = leased(stale)
        handed = next_range(stale, old)
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        backdate(first.id, settings.LEASE_TTL_SECONDS + 1)
        fresh = node_client()
        new = leased(fresh)
        assert new["group"]["id"] == group.id
        assert new["epoch"] == old["epoch"] + 1
        epoch = {"epoch": old["epoch"]}
        for action in ("next", "heartbeat", "release"):
            response = stale.post(lane_path(old, action), epoch)
            assert response.status_code == 409, action
            assert response.json()["error"] == "lease_lost"
        response = stale.http.put(
            lane_path(old, "snapshot") + f"?epoch={old['epoch']}&next=1500",
            data=b"x" * 10,
            content_type="application/gzip",
        )
        assert response.status_code == 409
        assert stale.get(lane_path(old, "snapshot") + f"?epoch={old['epoch']}").status_code == 409
        # the range it took via next was reset: its batch is fenced by the range epoch
        response = stale.post(
            f"/api/v1/ranges/{first.id}/batch",
            {"epoch": handed["epoch"], "next": 1500, "headers": 1},
        )
        assert response.status_code == 409
        again = next_range(fresh, new)
        assert again["id"] == first.id
        assert again["epoch"] == handed["epoch"] + 1
        response = stale.post(
            f"/api/v1/ranges/{first.id}/batch",
            {"epoch": handed["epoch"], "next": 1500, "headers": 1},
        )
        assert response.status_code == 409

    def test_a_range_every_window_dies_on_fails_after_max_attempts(
        self, node_client, backdate_lane, settings
    ):
        settings.MAX_ATTEMPTS = 3
        group = GroupFactory()
        poison, after = ranges_of(group, 2)
        for attempt in (1, 2, 3):
            node = node_client()
            lease = leased(node)
            handed = next_range(node, lease)
            assert (handed["id"], handed["epoch"]) == (poison.id, attempt)
            # the worker dies reading it: its lane goes quiet
            backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        taker = node_client()
        lease = leased(taker)
        poison.refresh_from_db()
        assert (poison.status, poison.attempts) == (RangeStatus.FAILED, 3)
        assert "went quiet 3 times" in poison.error
        assert next_range(taker, lease)["id"] == after.id


def set_snapshot(group, lane, next_id, seconds_ago):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE group_lane SET snapshot_next = %s, snapshot_size = 10,"
            " snapshot_at = now() - make_interval(secs => %s)"
            " WHERE group_id = %s AND lane = %s",
            [next_id, seconds_ago, group.id, lane],
        )


def mark(rng, by_lane=False, **fields):
    """Set a range's columns; `by_lane`: as if the lane's `next` had handed it out."""
    with connection.cursor() as cursor:
        sets = ", ".join(f"{k} = {v}" for k, v in fields.items())
        cursor.execute(f"UPDATE seed_range SET {sets} WHERE id = %s", [rng.id])
        if by_lane:
            cursor.execute(
                "INSERT INTO lane_handout (range_id, epoch, lane)"
                " SELECT id, epoch, 'history' FROM seed_range WHERE id = %s"
                " ON CONFLICT (range_id) DO UPDATE SET epoch = excluded.epoch, lane = 'history'",
                [rng.id],
            )
            cursor.execute(  # and the lane's handed-out articles widen, as `next` does
                "UPDATE group_lane SET handed_first = LEAST(handed_first, r.start_id),"
                " handed_last = GREATEST(handed_last, r.end_id) FROM seed_range AS r"
                " WHERE r.id = %s AND group_lane.group_id = r.group_id"
                " AND group_lane.lane = 'history'",
                [rng.id],
            )
    rng.refresh_from_db()


class TestSnapshotReset:
    """Taking a lane resets what its snapshot does not cover."""

    def take_over(self, node_client, backdate_lane, settings, group):
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        return leased(node_client())

    def test_the_cases(self, node_client, backdate_lane, settings):
        group = GroupFactory()
        # ranges of 1000 articles from 1000; the snapshot is at article 3500,
        # taken 100 seconds ago
        r1, r2, r3, r4, r5, r6 = ranges_of(group, 6)
        holder = node_client()
        lease = leased(holder)
        assert lease["group"]["id"] == group.id
        # done before the snapshot: stays done
        mark(r1, status="'done'", next_id=r1.end_id + 1, done_at="now() - interval '200 seconds'")
        # done before the snapshot though it lies past it: stays done
        mark(r5, status="'done'", next_id=r5.end_id + 1, done_at="now() - interval '200 seconds'")
        # done after the snapshot, across the snapshot's article: queued from it
        mark(
            r3,
            by_lane=True,
            status="'done'",
            next_id=r3.end_id + 1,
            done_at="now() - interval '10 seconds'",
        )
        # leased by the lane (range in work), read past the snapshot
        mark(
            r4,
            by_lane=True,
            status="'leased'",
            node_id=holder.node.id,
            heartbeat_at="now() - interval '2000 seconds'",
            next_id=r4.start_id + 300,
        )
        GroupLane.objects.filter(group=group, lane="history").update(range_id=r4.id)
        # queued but read past the snapshot
        mark(r6, by_lane=True, next_id=r6.start_id + 100)
        # r2 (1000..1999 is r1; r2 is 2000..2999): queued, untouched, before the snapshot
        set_snapshot(group, "history", 3500, 100)

        new = self.take_over(node_client, backdate_lane, settings, group)
        # The articles the lane handed out: r3..r6 (r1 and r5 were read by range leases).
        assert new["snapshot"] == {"next": 3500, "size": 10, "first": 3000, "last": 6999}
        for rng in (r1, r2, r3, r4, r5, r6):
            rng.refresh_from_db()
        assert (r1.status, r1.next_id) == (RangeStatus.DONE, r1.end_id + 1)
        assert (r5.status, r5.next_id) == (RangeStatus.DONE, r5.end_id + 1)
        assert (r2.status, r2.next_id) == (RangeStatus.QUEUED, r2.start_id)
        assert (r3.status, r3.next_id, r3.done_at) == (RangeStatus.QUEUED, 3500, None)
        assert (r4.status, r4.next_id, r4.node_id) == (RangeStatus.QUEUED, r4.start_id, None)
        assert (r6.status, r6.next_id) == (RangeStatus.QUEUED, r6.start_id)

    def test_without_a_snapshot_the_lane_continues_at_the_resume_points(
        self, node_client, backdate_lane, backdate, settings
    ):
        group = GroupFactory()
        r1, r2 = ranges_of(group, 2)
        holder = node_client()
        lease = leased(holder)
        handed = next_range(holder, lease)
        holder.post(
            f"/api/v1/ranges/{r1.id}/batch", {"epoch": handed["epoch"], "next": 1700, "headers": 1}
        )
        mark(r2, next_id=r2.start_id + 50)
        new = self.take_over(node_client, backdate_lane, settings, group)
        assert new["snapshot"] is None
        r1.refresh_from_db()
        r2.refresh_from_db()
        assert (r1.status, r1.next_id) == (RangeStatus.QUEUED, 1700)
        assert (r2.status, r2.next_id) == (RangeStatus.QUEUED, r2.start_id + 50)

    def test_a_live_range_lease_is_not_reset(self, node_client, backdate_lane, settings):
        group = GroupFactory()
        r1, _r2, _r3 = ranges_of(group, 3)
        ranger = node_client()
        assert ranger.lease()["id"] == r1.id
        holder = node_client()
        leased(holder)
        set_snapshot(group, "history", 1000, 100)
        self.take_over(node_client, backdate_lane, settings, group)
        r1.refresh_from_db()
        assert r1.status == RangeStatus.LEASED and r1.node_id == ranger.node.id


def counters(rng):
    rng.refresh_from_db()
    return rng.status, rng.next_id, rng.headers, rng.files, rng.fragments


def report(client, rng, epoch, next_id, headers):
    body = {"epoch": epoch, "next": next_id, "headers": headers}
    response = client.post(f"/api/v1/ranges/{rng.id}/batch", body)
    assert response.status_code == 200, response.content


def put_snapshot(client, lease, next_id):
    response = client.http.put(
        lane_path(lease, "snapshot") + f"?epoch={lease['epoch']}&next={next_id}",
        data=window_snapshot(lease["group"]["name"]),
        content_type="application/gzip",
    )
    assert response.status_code in (200, 204), response.content


def set_snapshot_age(group, seconds):
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE group_lane SET snapshot_at = now() - make_interval(secs => %s)"
            " WHERE group_id = %s",
            [seconds, group.id],
        )


class TestTakeoverCounters:
    """A takeover re-reads the window's work after the snapshot and counts it once."""

    def take_over(self, node_client, backdate_lane, settings, group):
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        return leased(node_client())

    def test_a_range_lease_past_the_snapshot_keeps_its_resume_point_and_counters(
        self, node_client, backdate_lane, settings, snapshot_dir
    ):
        group = GroupFactory()
        r1, r2 = ranges_of(group, 2)
        holder = node_client()
        lease = leased(holder)
        handed = next_range(holder, lease)
        assert handed["id"] == r1.id
        report(holder, r1, handed["epoch"], 1500, 500)
        mark(r1, files=1, fragments=2)  # as if the batch had reported them
        put_snapshot(holder, lease, 1500)
        report(holder, r1, handed["epoch"], 1800, 300)
        mark(r1, files=3, fragments=5)
        # A range lease (never handed out by the lane) read r2 exactly and went quiet.
        ranger = node_client()
        mark(
            r2,
            status="'leased'",
            node_id=ranger.node.id,
            epoch="epoch + 1",
            heartbeat_at="now() - interval '2000 seconds'",
            next_id=2400,
            headers=400,
            files=4,
            fragments=8,
        )
        self.take_over(node_client, backdate_lane, settings, group)
        # Nothing else was claimable, so the lease swept the quiet range lease
        # back to the queue first: at its own resume point, with its counters.
        assert counters(r2) == (RangeStatus.QUEUED, 2400, 400, 4, 8)
        # The window's range in work goes back to the snapshot, with the
        # counters it had there.
        assert counters(r1) == (RangeStatus.QUEUED, 1500, 500, 1, 2)

    def test_a_range_the_lane_handed_out_then_lost_to_a_range_lease_keeps_its_progress(
        self, node_client, backdate_lane, backdate, settings, snapshot_dir
    ):
        group = GroupFactory()
        (r1,) = ranges_of(group, 1)
        holder = node_client()
        lease = leased(holder)
        handed = next_range(holder, lease)
        put_snapshot(holder, lease, 1000)
        report(holder, r1, handed["epoch"], 1200, 200)
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        backdate(r1.id, settings.LEASE_TTL_SECONDS + 1)
        ranger = node_client()
        taken = ranger.lease()
        assert taken["id"] == r1.id and taken["start"] == 1200
        report(ranger, r1, taken["epoch"], 1600, 400)
        backdate(r1.id, settings.LEASE_TTL_SECONDS + 1)
        self.take_over(node_client, backdate_lane, settings, group)
        assert counters(r1)[1:3] == (1600, 600)

    def test_ranges_the_window_finished_after_the_snapshot_are_counted_once(
        self, node_client, backdate_lane, settings, snapshot_dir
    ):
        group = GroupFactory()
        r1, r2, _r3 = ranges_of(group, 3)
        holder = node_client()
        lease = leased(holder)
        first = next_range(holder, lease)
        report(holder, r1, first["epoch"], 1500, 500)
        mark(r1, files=1, fragments=2)
        put_snapshot(holder, lease, 1500)
        set_snapshot_age(group, 10)  # the test's transaction has one now()
        report(holder, r1, first["epoch"], 2000, 500)
        mark(r1, files=3, fragments=5)
        assert (
            holder.post(f"/api/v1/ranges/{r1.id}/finish", {"epoch": first["epoch"]}).status_code
            == 204
        )
        second = next_range(holder, lease)
        assert second["id"] == r2.id
        report(holder, r2, second["epoch"], 3000, 1000)
        mark(r2, files=7, fragments=9)
        assert (
            holder.post(f"/api/v1/ranges/{r2.id}/finish", {"epoch": second["epoch"]}).status_code
            == 204
        )
        lane = GroupLane.objects.get(group=group, lane="history")
        assert (lane.ranges_done, lane.headers) == (2, 2000)
        new_holder = node_client()
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        new = leased(new_holder)
        assert counters(r1) == (RangeStatus.QUEUED, 1500, 500, 1, 2)
        assert counters(r2) == (RangeStatus.QUEUED, 2000, 0, 0, 0)
        lane.refresh_from_db()
        assert (lane.ranges_done, lane.headers) == (0, 0)
        # Read again from the snapshot, the same articles count once.
        again = next_range(new_holder, new)
        assert again["id"] == r1.id and again["next"] == 1500
        report(new_holder, r1, again["epoch"], 2000, 500)
        assert (
            new_holder.post(f"/api/v1/ranges/{r1.id}/finish", {"epoch": again["epoch"]}).status_code
            == 204
        )
        assert counters(r1)[2] == 1000
        lane.refresh_from_db()
        assert (lane.ranges_done, lane.headers) == (1, 1000)


def age_snapshot(group, lane, seconds):
    """Move one lane's snapshot time back (the test's transaction has one now())."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE group_lane SET snapshot_at = now() - make_interval(secs => %s)"
            " WHERE group_id = %s AND lane = %s",
            [seconds, group.id, lane],
        )


def finish(client, rng, epoch):
    response = client.post(f"/api/v1/ranges/{rng.id}/finish", {"epoch": epoch})
    assert response.status_code == 204, response.content


class TestResetScope:
    """A takeover resets what its own lane's window worked, and only that."""

    def finished_after_a_snapshot(self, node_client, group, rng, snapshot_at):
        """The history lane reads `rng`, snapshots inside it, then finishes it."""
        holder = node_client()
        lease = leased(holder)
        handed = next_range(holder, lease)
        assert handed["id"] == rng.id
        report(holder, rng, handed["epoch"], snapshot_at, snapshot_at - rng.start_id)
        put_snapshot(holder, lease, snapshot_at)
        age_snapshot(group, "history", 10)
        report(holder, rng, handed["epoch"], rng.end_id + 1, rng.end_id + 1 - snapshot_at)
        finish(holder, rng, handed["epoch"])
        return holder

    def test_a_tail_snapshot_keeps_the_history_lanes_hand_outs(
        self, node_client, backdate_lane, settings, snapshot_dir
    ):
        group = GroupFactory()
        r1, r2 = ranges_of(group, 2)
        (tail_range,) = ranges_of(group, 1, start=90_000, priority=settings.TAIL_PRIORITY)
        self.finished_after_a_snapshot(node_client, group, r1, 1500)
        tail_holder = node_client()
        tail = leased(tail_holder, "tail")
        handed = next_range(tail_holder, tail)
        assert handed["id"] == tail_range.id
        report(tail_holder, tail_range, handed["epoch"], 90_500, 500)
        put_snapshot(tail_holder, tail, 90_500)  # above every history range
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        new = leased(node_client())
        assert (new["group"]["id"], new["snapshot"]["next"]) == (group.id, 1500)
        # r1 was finished after the history snapshot: read again from it
        assert counters(r1)[:3] == (RangeStatus.QUEUED, 1500, 500)
        assert counters(r2)[:2] == (RangeStatus.QUEUED, r2.start_id)
        # the tail lane's work is its own
        assert counters(tail_range)[:2] == (RangeStatus.LEASED, 90_500)

    @pytest.mark.parametrize(
        "narrowed", [{"LEASE_PRIORITY_MAX": 50}, {"LEASE_CAPTURE_ONLY": True}], ids=str
    )
    def test_a_takeover_resets_the_windows_work_outside_the_bounds_now(
        self, node_client, backdate_lane, settings, snapshot_dir, narrowed
    ):
        group = GroupFactory()
        (r1,) = ranges_of(group, 1, priority=100)
        # in the narrowed bounds too, so the lane still has work to hand out
        (r2,) = ranges_of(group, 1, start=5000, priority=40, capture=True)
        self.finished_after_a_snapshot(node_client, group, r1, 1500)
        for name, value in narrowed.items():
            setattr(settings, name, value)
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        new = leased(node_client())
        assert new["group"]["id"] == group.id
        assert counters(r1)[:3] == (RangeStatus.QUEUED, 1500, 500)
        assert counters(r2)[:2] == (RangeStatus.QUEUED, r2.start_id)


class TestCoexistence:
    def test_range_leases_skip_ranges_of_a_held_lane(self, node_client, settings):
        held = GroupFactory()
        ranges_of(held, 2, priority=100)
        (tail,) = ranges_of(held, 1, start=90_000, priority=settings.TAIL_PRIORITY)
        free = GroupFactory()
        (other,) = ranges_of(free, 1, priority=150)
        lane_holder = node_client()
        assert leased(lane_holder, "history")["group"]["id"] == held.id
        ranger = node_client()
        # the held group's history ranges are skipped; its tail lane is free
        got = [ranger.lease()["id"], ranger.lease()["id"]]
        assert got == [tail.id, other.id]
        assert ranger.lease() is None

    @pytest.mark.slow
    def test_range_leases_look_past_a_held_lane_that_owns_most_of_the_queue(
        self, node_client, settings
    ):
        # More open ranges in held lanes than the claim walks (HELD_WALK_LIMIT):
        # the claim asks the free lanes instead of walking the held ones.
        held = GroupFactory()
        services.create_ranges(held, [(i * 10, i * 10 + 9) for i in range(2500)])
        (tail,) = ranges_of(held, 1, start=90_000, priority=settings.TAIL_PRIORITY)
        free = GroupFactory()
        newer, older = ranges_of(free, 2, start=500_000)[::-1]
        lane_holder = node_client()
        assert leased(lane_holder, "history")["group"]["id"] == held.id
        ranger = node_client()
        # The most urgent free lane first (the held group's tail), then the
        # free group's newest range first.
        got = [ranger.lease()["id"] for _ in range(3)]
        assert got == [tail.id, newer.id, older.id]
        assert ranger.lease() is None
        assert SeedRange.objects.filter(group=held, status=RangeStatus.QUEUED).count() == 2500

    def crowd(self, node_client, **fields):
        """A held history lane that owns more open ranges than the claim walks past."""
        held = GroupFactory()
        services.create_ranges(held, [(i * 10, i * 10 + 9) for i in range(2100)], **fields)
        assert leased(node_client(), "history")["group"]["id"] == held.id
        return held

    @pytest.mark.slow
    @pytest.mark.parametrize(
        "outside",
        [
            ({"LEASE_PRIORITY_MAX": 200}, {"priority": 500}, {}),
            ({"LEASE_CAPTURE_ONLY": True}, {"priority": 100}, {"capture": True}),
        ],
        ids=["above LEASE_PRIORITY_MAX", "uncaptured under LEASE_CAPTURE_ONLY"],
    )
    def test_a_crowded_claim_hands_out_ranges_of_no_lane(self, node_client, settings, outside):
        bounds, laneless, held_fields = outside
        for name, value in bounds.items():
            setattr(settings, name, value)
        self.crowd(node_client, **held_fields)
        free = GroupFactory()
        (mine,) = ranges_of(free, 1, start=500_000, **laneless)
        ranger = node_client()
        assert ranger.lease()["id"] == mine.id
        assert ranger.lease() is None

    @pytest.mark.slow
    def test_a_crowded_claim_keeps_the_urgency_mix(self, node_client, settings):
        self.crowd(node_client)
        urgent = GroupFactory()
        ranges_of(urgent, 4, start=500_000, priority=settings.TAIL_PRIORITY)
        normal = GroupFactory()
        ranges_of(normal, 4, start=500_000)
        ranger = node_client()
        groups = [ranger.lease()["group"] for _ in range(8)]
        assert groups == [urgent.name, normal.name] * 4

    def test_range_leases_take_a_lane_again_once_it_is_quiet(
        self, node_client, backdate_lane, settings
    ):
        group = GroupFactory()
        (rng,) = ranges_of(group, 1)
        leased(node_client())
        ranger = node_client()
        assert ranger.lease() is None
        backdate_lane(group.id, "history", settings.LEASE_TTL_SECONDS + 1)
        assert ranger.lease()["id"] == rng.id


class TestPlannedWork:
    def test_the_trigger_keeps_planned_work_per_lane(self, node_client, settings):
        group = GroupFactory()
        # the first lease of any lane configures the trigger
        lease_lane(node_client(), "tail")
        ranges = ranges_of(group, 3, priority=100)
        ranges_of(group, 1, start=90_000, priority=5)
        row = GroupLane.objects.get(group=group, lane="history")
        assert (row.planned_articles, row.urgent_priority) == (3000, 100)
        tail = GroupLane.objects.get(group=group, lane="tail")
        assert (tail.planned_articles, tail.urgent_priority) == (1000, 5)
        SeedRange.objects.filter(id=ranges[0].id).update(priority=60)
        row.refresh_from_db()
        assert (row.planned_articles, row.urgent_priority) == (3000, 60)
        SeedRange.objects.filter(id=ranges[0].id).update(status="done")
        row.refresh_from_db()
        assert (row.planned_articles, row.urgent_priority) == (2000, 100)
        SeedRange.objects.filter(id=ranges[1].id).delete()
        row.refresh_from_db()
        assert (row.planned_articles, row.urgent_priority) == (1000, 100)
        SeedRange.objects.filter(group=group, priority=100).update(status="failed")
        row.refresh_from_db()
        assert (row.planned_articles, row.urgent_priority) == (0, None)

    def test_changed_lane_bounds_rebuild_the_summaries(self, node_client, settings):
        group = GroupFactory()
        ranges_of(group, 2, priority=100)
        lease_lane(node_client(), "tail")
        assert GroupLane.objects.get(group=group, lane="history").planned_articles == 2000
        settings.TAIL_PRIORITY = 100
        lease_lane(node_client(), "history")
        assert GroupLane.objects.get(group=group, lane="tail").planned_articles == 2000
        assert GroupLane.objects.get(group=group, lane="history").urgent_priority is None


class TestStatus:
    def test_status_and_seed_status_show_the_lanes(self, node_client):
        from django.core.management import call_command

        group = GroupFactory()
        ranges_of(group, 1)
        node = node_client()
        lease = leased(node)
        next_range(node, lease)
        body = node.get("/api/v1/status").json()
        (lane,) = body["lanes"]
        assert lane["group"] == group.name
        assert lane["lane"] == "history"
        assert lane["holder"] == node.node.name
        assert lane["live"] is True
        assert lane["epoch"] == 1
        assert lane["range"] is not None
        for key in (
            "snapshot_next",
            "snapshot_age_seconds",
            "snapshot_size",
            "ranges_done",
            "headers",
        ):
            assert key in lane
        out = call_command("seed_status")
        assert group.name in out and "history" in out


class TestAdmin:
    @pytest.mark.slow
    def test_the_admin_lists_lanes_and_force_releases_after_confirming(
        self, node_client, admin_client
    ):
        group = GroupFactory()
        (rng,) = ranges_of(group, 1)
        node = node_client()
        lease = leased(node)
        next_range(node, lease)
        row = GroupLane.objects.get(group=group, lane="history")
        page = admin_client.get("/admin/leases/grouplane/")
        assert page.status_code == 200
        assert group.name in page.content.decode()
        form = {"action": "force_release", "_selected_action": [row.id]}
        confirm_page = admin_client.post("/admin/leases/grouplane/", form)
        assert confirm_page.status_code == 200
        assert b"Take these lanes" in confirm_page.content
        row.refresh_from_db()
        assert row.node_id == node.node.id
        done = admin_client.post(
            "/admin/leases/grouplane/", {**form, "confirmed": "yes"}, follow=True
        )
        assert "Released 1 lane(s)." in done.content.decode()
        row.refresh_from_db()
        rng.refresh_from_db()
        assert row.node_id is None and row.epoch == 2
        assert rng.status == RangeStatus.QUEUED
        assert (
            node.post(lane_path(lease, "heartbeat"), {"epoch": lease["epoch"]}).status_code == 409
        )


def test_a_lane_heartbeat_is_one_query_after_authentication(node_client, django_assert_num_queries):
    group = GroupFactory()
    ranges_of(group, 1)
    node = node_client()
    lease = leased(node)  # last_seen is written on this first call
    # The fenced heartbeat: the token was looked up on the first call and is kept
    # (TOKEN_CACHE_SECONDS, indexer/token_cache.py).
    with django_assert_num_queries(1):
        response = node.post(lane_path(lease, "heartbeat"), {"epoch": lease["epoch"]})
    assert response.status_code == 204


@pytest.mark.parametrize("pick", ["pick_most_planned", "pick_unheld_longest"])
def test_the_free_lanes_function_is_inlined_into_each_turn_of_the_group_choice(pick):
    # Inlined, the pick's ORDER BY ... LIMIT 1 can read the turn's index
    # (bench/bench_group_lease.py); a function scan could not.
    from leases.sql import queries

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN " + queries[pick], {"lane": "history", "ttl": 60})
        plan = " ".join(row[0] for row in cursor.fetchall())
    assert "on group_lane gl" in plan and "Function Scan" not in plan, plan
