"""One token cannot drain the queue: a per-node lease cap, a rate limit kept in
PostgreSQL, a bound on uncounted releases, and disabling ends leases at once."""

from __future__ import annotations

import pytest
from django.db import connection

from indexer.models import AuditEntry
from indexer.services import set_nodes_disabled
from leases.models import GroupLane
from seeding.models import RangeStatus, SeedRange
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lease_lane, next_range

pytestmark = pytest.mark.django_db


def ranges(count: int, **kwargs):
    group = GroupFactory()
    return [SeedRangeFactory(group=group, **kwargs) for _ in range(count)]


def test_a_node_past_its_lease_cap_gets_429_too_many_leases(node_client, settings):
    settings.LEASE_MAX_PER_NODE = 2
    ranges(4)
    node = node_client()
    first, _second = node.lease(), node.lease()
    refused = node.post("/api/v1/ranges/lease")
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_leases"
    assert "LEASE_MAX_PER_NODE=2" in refused.json()["detail"]
    assert int(refused["Retry-After"]) == settings.LEASE_RETRY_AFTER_SECONDS
    assert SeedRange.objects.filter(status=RangeStatus.LEASED).count() == 2
    # Another node is not held back, and finishing one lets this node lease again.
    assert node_client().lease() is not None
    done = node.post(f"/api/v1/ranges/{first['id']}/finish", {"epoch": first["epoch"]})
    assert done.status_code == 204
    assert node.lease() is not None


def test_held_lanes_count_against_the_cap(node_client, settings):
    settings.LEASE_MAX_PER_NODE = 2
    ranges(3)
    node = node_client()
    lease = lease_lane(node)["lease"]
    assert next_range(node, lease) is not None  # the lane and its range: 2 leases
    refused = node.post("/api/v1/groups/lease", {"lane": "tail"})
    assert refused.status_code == 429
    assert refused.json()["error"] == "too_many_leases"


def test_lease_calls_past_the_rate_get_429_throttled_with_retry_after(node_client, settings):
    settings.LEASE_RATE_PER_MINUTE = 3
    node, other = node_client(), node_client()
    for _ in range(3):
        assert node.post("/api/v1/ranges/lease").status_code == 200  # nothing queued: 200
    refused = node.post("/api/v1/ranges/lease")
    assert refused.status_code == 429
    assert refused.json()["error"] == "throttled"
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert node.post("/api/v1/groups/lease", {"lane": "history"}).status_code == 429
    assert other.post("/api/v1/ranges/lease").status_code == 200


def test_the_rate_is_counted_in_postgresql_so_every_host_shares_it(node_client, settings):
    """The count lives in the database, not in a process: a second coordinator
    host (another process, same database) sees the same window."""
    settings.LEASE_RATE_PER_MINUTE = 2
    node = node_client()
    node.post("/api/v1/ranges/lease")
    with connection.cursor() as cursor:  # what "another host" did: one more hit
        cursor.execute("SELECT hits FROM rate_hit(%s, 60)", [f"lease:{node.node.id}"])
        assert cursor.fetchone()[0] == 2
    assert node.post("/api/v1/ranges/lease").status_code == 429


def test_uncounted_releases_are_bounded_per_range(node_client, settings):
    settings.MAX_UNCOUNTED_RELEASES = 2
    settings.MAX_ATTEMPTS = 3
    (target,) = ranges(1)
    node = node_client()
    for _ in range(20):
        lease = node.lease()
        if lease is None:
            break
        body = {"epoch": lease["epoch"], "uncounted": True}
        assert node.post(f"/api/v1/ranges/{lease['id']}/release", body).status_code == 204
    target.refresh_from_db()
    # Two releases gave their attempt back; the next three counted, then it failed.
    assert target.status == RangeStatus.FAILED
    assert target.uncounted_releases == 5
    assert target.attempts == 3


def test_disabling_a_node_ends_its_leases_at_once_and_audits_it(node_client):
    ranges(3)
    node = node_client()
    alone = node.lease()
    lane = lease_lane(node)["lease"]
    in_lane = next_range(node, lane)
    set_nodes_disabled([node.node.id], True, actor=None)
    assert SeedRange.objects.get(id=alone["id"]).status == RangeStatus.QUEUED
    assert SeedRange.objects.get(id=in_lane["id"]).status == RangeStatus.QUEUED
    assert not GroupLane.objects.filter(node_id=node.node.id).exists()
    entry = AuditEntry.objects.get(action="nodes disabled")
    assert entry.detail["ranges_ended"] == 2 and entry.detail["lanes_ended"] == 1
    # Its next call is refused, and another node gets the work.
    assert node.post("/api/v1/ranges/lease").status_code == 401
    assert node_client().lease() is not None


def test_a_refused_lease_call_claims_nothing_though_gate_and_claim_are_one_statement(
    node_client, settings
):
    # gated_lease_range runs the claim only when the gate admits the call.
    settings.LEASE_RATE_PER_MINUTE = 1
    SeedRangeFactory(start_id=1, end_id=999)
    SeedRangeFactory(start_id=1000, end_id=1999)
    node = node_client()
    assert node.post("/api/v1/ranges/lease").status_code == 200
    refused = node.post("/api/v1/ranges/lease")
    assert refused.status_code == 429 and refused.json()["error"] == "throttled"
    assert SeedRange.objects.filter(status="leased").count() == 1
