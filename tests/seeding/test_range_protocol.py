"""The range-lease protocol over real HTTP requests against PostgreSQL."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import override_settings

from catalog.models import CatalogFile
from indexer.space import forget_cached_sizes
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory

pytestmark = pytest.mark.django_db

SEG = [1, 1000, "<a1@example.com>", 700000]


def a_file(**overrides):
    item = {
        "subject": '[01/12] - "name.part01.rar" yEnc (1/2)',
        "poster": "someone <a@b.c>",
        "date": 1700000000,
        "total": 2,
        "segments": [SEG],
    }
    item.update(overrides)
    return item


def lease_one(client):
    lease = client.lease()
    assert lease is not None
    return lease


class TestLease:
    def test_a_node_leases_the_queued_range_with_its_resume_point(self, node_client):
        rng = SeedRangeFactory(start_id=1000, end_id=5999, next_id=2500)
        node = node_client()
        lease = lease_one(node)
        assert lease == {
            "id": rng.id,
            "group": rng.group.name,
            "start": 2500,
            "end": 5999,
            "epoch": 1,
        }
        rng.refresh_from_db()
        assert rng.status == RangeStatus.LEASED
        assert rng.node_id == node.node.id
        assert rng.attempts == 1
        assert rng.heartbeat_at is not None

    def test_nothing_to_lease_says_when_to_retry(self, node_client):
        response = node_client().post("/api/v1/ranges/lease")
        assert response.status_code == 200
        body = response.json()
        assert body["lease"] is None
        assert body["retry_after"] > 0
        assert body["paused"] is None

    def test_ranges_go_out_in_priority_then_plan_order(self, node_client):
        group = GroupFactory()
        later = SeedRangeFactory(group=group, priority=100)
        first = SeedRangeFactory(group=group, priority=50)
        second = SeedRangeFactory(group=group, priority=100)
        node = node_client()
        assert [lease_one(node)["id"] for _ in range(3)] == [first.id, later.id, second.id]

    @override_settings(DB_MAX_BYTES=1024)
    def test_leasing_pauses_while_the_database_is_over_its_size_limit(self, node_client):
        forget_cached_sizes()
        SeedRangeFactory()
        body = node_client().post("/api/v1/ranges/lease").json()
        forget_cached_sizes()
        assert body["lease"] is None
        assert "DB_MAX_BYTES" in body["paused"]
        assert body["retry_after"] > 0
        assert SeedRange.objects.filter(status=RangeStatus.QUEUED).count() == 1


class TestBatch:
    def test_a_batch_moves_the_resume_point_and_adds_the_counters(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        body = {
            "epoch": lease["epoch"],
            "next": 2500,
            "headers": 1500,
            "files": [a_file()],
            "fragments": [],
        }
        response = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
        assert response.status_code == 200, response.content
        assert response.json()["next"] == 2500
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.next_id, rng.headers, rng.files, rng.fragments) == (2500, 1500, 1, 0)

    def test_a_replayed_batch_changes_nothing(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        body = {
            "epoch": lease["epoch"],
            "next": 2500,
            "headers": 1500,
            "files": [a_file()],
            "fragments": [],
        }
        assert node.post(f"/api/v1/ranges/{lease['id']}/batch", body).status_code == 200
        replay = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
        assert replay.status_code == 200
        assert replay.json()["next"] == 2500
        older = dict(body, next=2000)
        assert node.post(f"/api/v1/ranges/{lease['id']}/batch", older).json()["next"] == 2500
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.next_id, rng.headers, rng.files) == (2500, 1500, 1)

    def test_next_past_the_end_stops_at_end_plus_one(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        body = {"epoch": lease["epoch"], "next": 999999, "headers": 5000}
        assert node.post(f"/api/v1/ranges/{lease['id']}/batch", body).json()["next"] == 6000

    def test_a_batch_counts_toward_the_throughput_rollup(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        node.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            {"epoch": lease["epoch"], "next": 1500, "headers": 500},
        )
        node.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            {"epoch": lease["epoch"], "next": 1500, "headers": 500},
        )
        status = node.get("/api/v1/status").json()
        assert status["headers_last_hour"] == 500

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"next": 10, "headers": 1}, "epoch"),
            ({"epoch": 1, "headers": 1}, "next"),
            ({"epoch": 1, "next": 10}, "headers"),
            ({"epoch": -1, "next": 10, "headers": 1}, "epoch"),
            ({"epoch": 1, "next": -5, "headers": 1}, "next"),
            ({"epoch": 1, "next": 2**70, "headers": 1}, "next"),
            ({"epoch": 1, "next": 10, "headers": 1, "files": "x"}, "files"),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [a_file(subject="x" * 10_000)]},
                "files[0].subject",
            ),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [{"subject": "a"}]},
                "files[0].poster",
            ),
            ({"epoch": 1, "next": 10, "headers": 1, "files": [a_file(total=-1)]}, "files[0].total"),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [a_file(total=10**12)]},
                "files[0].total",
            ),
            ({"epoch": 1, "next": 10, "headers": 1, "files": [a_file(date=-3)]}, "files[0].date"),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[1, 5, "no-brackets", 10]])],
                },
                "files[0].segments[0][2]",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[1, 5, "<a@b>", 10]] * 3)],
                },
                "files[0].segments",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[3, 5, "<a@b>", 10]])],
                },
                "files[0].segments[0][0]",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[1, 5, "<a@b>", 2**40]])],
                },
                "files[0].segments[0][3]",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "fragments": [a_file(segments=[[1, "5", "<a@b>", 1]])],
                },
                "fragments[0].segments[0][1]",
            ),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [a_file(), a_file(poster=7)]},
                "files[1].poster",
            ),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [a_file(subject="x\ud800 (1/2)")]},
                "files[0].subject",
            ),
            (
                {"epoch": 1, "next": 10, "headers": 1, "files": [a_file(poster="p\udfff")]},
                "files[0].poster",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[1, 5, "<a\ud800@b>", 10]])],
                },
                "files[0].segments[0][2]",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file(segments=[[1, 5, "<a@b>", 10], [1, 6, "<c@d>", 10]])],
                    "fragments": [a_file(date=True)],
                },
                "fragments[0].date",
            ),
            (
                {
                    "epoch": 1,
                    "next": 10,
                    "headers": 1,
                    "files": [a_file()],
                    "fragments": [a_file(segments=[[1, 5, "<a@b>"]])],
                },
                "fragments[0].segments[0]",
            ),
        ],
    )
    def test_a_bad_batch_is_a_400_naming_the_field_and_stores_nothing(
        self, node_client, body, field
    ):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        # json.dumps escapes lone surrogates as \ud800, as a node's encoder would.
        response = node.http.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            data=json.dumps(body),
            content_type="application/json",
        )
        assert response.status_code == 400, response.content
        error = response.json()
        assert error["error"] == "invalid"
        assert field in error["detail"]
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.next_id, rng.headers) == (1000, 0)
        assert not CatalogFile.objects.exists()

    def test_malformed_json_is_a_400(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        response = node.http.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            data=b"{not json",
            content_type="application/json",
        )
        assert response.status_code == 400
        assert response.json()["error"] == "invalid"

    def test_a_body_nested_too_deeply_to_parse_is_a_400(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        response = node.http.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            data=b"[" * 100_000,
            content_type="application/json",
        )
        assert response.status_code == 400
        assert response.json()["error"] == "invalid"
        assert "nests too deeply" in response.json()["detail"]

    def test_a_json_array_body_is_a_400(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        response = node.http.post(
            f"/api/v1/ranges/{lease['id']}/batch", data=b"[1,2]", content_type="application/json"
        )
        assert response.status_code == 400
        assert response.json()["error"] == "invalid"

    @override_settings(API_MAX_BODY_BYTES=2048)
    def test_a_body_over_the_limit_is_a_413(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        body = {"epoch": lease["epoch"], "next": 10, "headers": 1, "files": [a_file()] * 40}
        response = node.post(f"/api/v1/ranges/{lease['id']}/batch", body)
        assert response.status_code == 413
        assert response.json()["error"] == "too_large"


class TestFencing:
    def test_an_unknown_range_is_a_404(self, node_client):
        node = node_client()
        for call, body in [
            ("batch", {"epoch": 1, "next": 1, "headers": 0}),
            ("heartbeat", {"epoch": 1}),
            ("finish", {"epoch": 1}),
            ("release", {"epoch": 1}),
        ]:
            response = node.post(f"/api/v1/ranges/987654/{call}", body)
            assert response.status_code == 404, call
            assert response.json()["error"] == "not_found"
        assert (
            node.post("/api/v1/ranges/99999999999999999999999/heartbeat", {"epoch": 1}).status_code
            == 404
        )

    def test_one_node_cannot_touch_another_nodes_range(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        owner, other = node_client(), node_client()
        lease = lease_one(owner)
        rid, epoch = lease["id"], lease["epoch"]
        for call, body in [
            ("batch", {"epoch": epoch, "next": 3000, "headers": 9}),
            ("heartbeat", {"epoch": epoch}),
            ("finish", {"epoch": epoch}),
            ("release", {"epoch": epoch}),
        ]:
            response = other.post(f"/api/v1/ranges/{rid}/{call}", body)
            assert response.status_code == 409, call
            assert response.json()["error"] == "lease_lost"
        rng = SeedRange.objects.get(id=rid)
        assert (rng.status, rng.node_id, rng.next_id, rng.headers) == (
            RangeStatus.LEASED,
            owner.node.id,
            1000,
            0,
        )

    def test_a_stale_epoch_is_a_409(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        response = node.post(
            f"/api/v1/ranges/{lease['id']}/heartbeat", {"epoch": lease["epoch"] - 1}
        )
        assert response.status_code == 409
        assert "stale" in response.json()["detail"]

    def test_a_range_that_is_not_leased_is_a_409(self, node_client):
        rng = SeedRangeFactory()
        response = node_client().post(f"/api/v1/ranges/{rng.id}/finish", {"epoch": 0})
        assert response.status_code == 409

    def test_a_quiet_lease_passes_to_the_next_node_and_fences_the_old_one(
        self, node_client, backdate, settings
    ):
        SeedRangeFactory(start_id=1000, end_id=5999)
        first, second = node_client(), node_client()
        old = lease_one(first)
        first.post(
            f"/api/v1/ranges/{old['id']}/batch",
            {"epoch": old["epoch"], "next": 2000, "headers": 1000},
        )
        backdate(old["id"], settings.LEASE_TTL_SECONDS + 5)
        new = lease_one(second)
        assert new["id"] == old["id"]
        assert new["epoch"] == old["epoch"] + 1
        assert new["start"] == 2000
        stale = first.post(
            f"/api/v1/ranges/{old['id']}/batch",
            {"epoch": old["epoch"], "next": 4000, "headers": 2000},
        )
        assert stale.status_code == 409
        assert (
            first.post(f"/api/v1/ranges/{old['id']}/finish", {"epoch": old["epoch"]}).status_code
            == 409
        )
        rng = SeedRange.objects.get(id=old["id"])
        assert (rng.status, rng.node_id, rng.next_id, rng.headers, rng.attempts) == (
            RangeStatus.LEASED,
            second.node.id,
            2000,
            1000,
            2,
        )

    def test_a_live_lease_is_not_taken_over(self, node_client):
        SeedRangeFactory()
        first, second = node_client(), node_client()
        lease_one(first)
        assert second.lease() is None

    def test_a_range_that_goes_quiet_max_attempts_times_fails(
        self, node_client, backdate, settings
    ):
        settings.MAX_ATTEMPTS = 3
        rng = SeedRangeFactory()
        for _ in range(3):
            lease = lease_one(node_client())
            backdate(lease["id"], settings.LEASE_TTL_SECONDS + 5)
        assert node_client().lease() is None
        rng.refresh_from_db()
        assert rng.status == RangeStatus.FAILED
        assert rng.attempts == 3
        assert "quiet" in rng.error

    def test_a_quiet_range_that_was_fully_reported_is_done(self, node_client, backdate, settings):
        rng = SeedRangeFactory(start_id=1000, end_id=1999)
        node = node_client()
        lease = lease_one(node)
        node.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            {"epoch": lease["epoch"], "next": 2000, "headers": 1000},
        )
        backdate(lease["id"], settings.LEASE_TTL_SECONDS + 5)
        assert node_client().lease() is None
        rng.refresh_from_db()
        assert rng.status == RangeStatus.DONE


class TestHeartbeatFinishRelease:
    def test_heartbeat_keeps_the_lease_alive(self, node_client, backdate, settings):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        backdate(lease["id"], settings.LEASE_TTL_SECONDS - 10)
        assert (
            node.post(
                f"/api/v1/ranges/{lease['id']}/heartbeat", {"epoch": lease["epoch"]}
            ).status_code
            == 204
        )
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT now() - heartbeat_at < interval '5 seconds' FROM seed_range WHERE id = %s",
                [lease["id"]],
            )
            assert cursor.fetchone()[0] is True

    def test_finish_marks_the_range_done(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        assert (
            node.post(f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]}).status_code
            == 204
        )
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.status, rng.next_id) == (RangeStatus.DONE, 6000)
        assert rng.done_at is not None
        assert (
            node.post(f"/api/v1/ranges/{lease['id']}/finish", {"epoch": lease["epoch"]}).status_code
            == 409
        )

    def test_finish_clears_the_error_of_an_earlier_release(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        first = node_client()
        lease = lease_one(first)
        body = {"epoch": lease["epoch"], "error": "the news server hung up"}
        assert first.post(f"/api/v1/ranges/{lease['id']}/release", body).status_code == 204
        assert SeedRange.objects.get(id=lease["id"]).error == "the news server hung up"
        second = node_client()
        again = lease_one(second)
        assert again["id"] == lease["id"]
        finish = second.post(f"/api/v1/ranges/{again['id']}/finish", {"epoch": again["epoch"]})
        assert finish.status_code == 204
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.status, rng.error) == (RangeStatus.DONE, "")

    def test_release_queues_the_range_again_at_its_resume_point(self, node_client):
        SeedRangeFactory(start_id=1000, end_id=5999)
        node = node_client()
        lease = lease_one(node)
        node.post(
            f"/api/v1/ranges/{lease['id']}/batch",
            {"epoch": lease["epoch"], "next": 3000, "headers": 2000},
        )
        response = node.post(
            f"/api/v1/ranges/{lease['id']}/release", {"epoch": lease["epoch"], "error": "x" * 5000}
        )
        assert response.status_code == 204
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.status, rng.next_id, rng.attempts, rng.node_id) == (
            RangeStatus.QUEUED,
            3000,
            1,
            None,
        )
        assert len(rng.error) == 2000
        again = lease_one(node_client())
        assert (again["id"], again["start"]) == (lease["id"], 3000)

    def test_an_uncounted_release_gives_the_attempt_back(self, node_client):
        SeedRangeFactory()
        node = node_client()
        lease = lease_one(node)
        node.post(
            f"/api/v1/ranges/{lease['id']}/release",
            {"epoch": lease["epoch"], "uncounted": True, "error": "news server unreachable"},
        )
        rng = SeedRange.objects.get(id=lease["id"])
        assert (rng.status, rng.attempts, rng.error) == (
            RangeStatus.QUEUED,
            0,
            "news server unreachable",
        )

    def test_release_after_the_last_attempt_fails_the_range(self, node_client, settings):
        settings.MAX_ATTEMPTS = 2
        rng = SeedRangeFactory()
        for expected in (RangeStatus.QUEUED, RangeStatus.FAILED):
            node = node_client()
            lease = lease_one(node)
            node.post(
                f"/api/v1/ranges/{lease['id']}/release", {"epoch": lease["epoch"], "error": "boom"}
            )
            rng.refresh_from_db()
            assert rng.status == expected
        assert node_client().lease() is None


class TestAuthentication:
    @pytest.mark.parametrize(
        "header",
        [None, "Bearer", "Bearer sn_unknown", "Basic abc", "Bearer not-a-token"],
    )
    def test_calls_without_a_valid_token_are_401(self, client, header):
        extra = {"HTTP_AUTHORIZATION": header} if header else {}
        response = client.post("/api/v1/ranges/lease", **extra)
        assert response.status_code == 401
        assert response.json()["error"] == "unauthenticated"
        assert response["WWW-Authenticate"].startswith("Bearer")

    def test_a_disabled_node_gets_401(self, node_client):
        node = node_client(disabled=True)
        response = node.post("/api/v1/ranges/lease")
        assert response.status_code == 401
        assert "disabled" in response.json()["detail"]

    def test_last_seen_is_written_on_first_call(self, node_client):
        node = node_client()
        node.post("/api/v1/ranges/lease")
        node.node.refresh_from_db()
        assert node.node.last_seen_at is not None

    def test_an_unknown_api_path_is_a_json_404(self, node_client):
        response = node_client().get("/api/v1/nothing-here")
        assert response.status_code == 404
        assert response.json()["error"] == "not_found"

    def test_a_wrong_method_is_a_json_405(self, node_client):
        response = node_client().get("/api/v1/ranges/lease")
        assert response.status_code == 405
        assert response.json()["error"] == "method_not_allowed"
