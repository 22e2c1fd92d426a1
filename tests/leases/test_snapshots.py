"""Lane snapshots through Django's request handling: store, fetch, fence, limits."""

from __future__ import annotations

import pytest

from leases.models import GroupLane
from leases.snapshots import file_stem
from tests.factories import GroupFactory, SeedRangeFactory
from tests.leases.conftest import lane_path, lease_lane

pytestmark = pytest.mark.django_db


def held_lane(node_client, lane="history", **group):
    grp = GroupFactory(**group)
    SeedRangeFactory(group=grp, priority=5 if lane == "tail" else 100)
    node = node_client()
    lease = lease_lane(node, lane)["lease"]
    assert lease["group"]["id"] == grp.id
    return node, lease


def put(node, lease, body, next_id=1500, epoch=None, **extra):
    epoch = lease["epoch"] if epoch is None else epoch
    return node.http.put(
        lane_path(lease, "snapshot") + f"?epoch={epoch}&next={next_id}",
        data=body,
        content_type="application/gzip",
        **extra,
    )


def get(node, lease, epoch=None):
    epoch = lease["epoch"] if epoch is None else epoch
    return node.get(lane_path(lease, "snapshot") + f"?epoch={epoch}")


def test_a_snapshot_is_stored_and_served_with_its_article(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name="alt.binaries.snap")
    assert get(node, lease).status_code == 404
    body = bytes(range(256)) * 1000
    assert put(node, lease, body, next_id=4321).status_code == 204
    assert (snapshot_dir / "alt.binaries.snap.gz").read_bytes() == body
    assert not list(snapshot_dir.glob("*.part"))
    response = get(node, lease)
    assert response.status_code == 200
    assert response["Content-Length"] == str(len(body))
    assert response["X-Snapshot-Next"] == "4321"
    assert response["Content-Type"] == "application/gzip"
    assert b"".join(response.streaming_content) == body
    row = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    assert (row.snapshot_next, row.snapshot_size) == (4321, len(body))
    assert row.snapshot_at is not None


def test_the_tail_lane_has_its_own_snapshot(node_client, snapshot_dir):
    node, lease = held_lane(node_client, lane="tail", name="alt.binaries.tails")
    assert put(node, lease, b"tail window").status_code == 204
    assert (snapshot_dir / "alt.binaries.tails-tail.gz").read_bytes() == b"tail window"


def test_a_new_snapshot_replaces_the_old_one_and_the_next_holder_gets_it(
    node_client, snapshot_dir, backdate_lane, settings
):
    node, lease = held_lane(node_client)
    assert put(node, lease, b"first", next_id=2000).status_code == 204
    assert put(node, lease, b"second", next_id=2500).status_code == 204
    backdate_lane(lease["group"]["id"], "history", settings.LEASE_TTL_SECONDS + 1)
    other = node_client()
    new = lease_lane(other)["lease"]
    assert new["snapshot"] == {"next": 2500, "size": 6}
    response = get(other, new)
    assert b"".join(response.streaming_content) == b"second"
    assert get(node, lease).status_code == 409


def test_a_snapshot_over_the_limit_is_a_413_and_keeps_the_old_one(
    node_client, snapshot_dir, settings
):
    node, lease = held_lane(node_client)
    assert put(node, lease, b"old", next_id=10).status_code == 204
    settings.SNAPSHOT_MAX_BYTES = 100
    response = put(node, lease, b"y" * 101)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    response = get(node, lease)
    assert b"".join(response.streaming_content) == b"old"
    assert response["X-Snapshot-Next"] == "10"
    assert not list(snapshot_dir.glob("*.part"))


def test_a_disk_that_fails_is_a_503_and_keeps_the_old_snapshot(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name="alt.binaries.disk")
    assert put(node, lease, b"old", next_id=10).status_code == 204
    # The coordinator cannot open its part file (here: a directory is in the way).
    (snapshot_dir / f"alt.binaries.disk.gz.{lease['epoch']}.part").mkdir()
    response = put(node, lease, b"new", next_id=20)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "could not write the snapshot" in response.json()["detail"]
    response = get(node, lease)
    assert b"".join(response.streaming_content) == b"old"
    assert response["X-Snapshot-Next"] == "10"


def test_a_malformed_content_length_is_a_400(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    response = put(node, lease, b"abc", CONTENT_LENGTH="\u00b2")
    assert response.status_code == 400
    assert "Content-Length" in response.json()["detail"]


def test_a_body_over_the_limit_while_streaming_is_a_413(node_client, snapshot_dir, settings):
    from leases import services, snapshots

    node, lease = held_lane(node_client)
    settings.SNAPSHOT_MAX_BYTES = 3 * snapshots.CHUNK_BYTES
    chunks = (b"z" * snapshots.CHUNK_BYTES for _ in range(5))  # no Content-Length (chunked)
    with pytest.raises(services.TooLarge):
        services.store_snapshot(
            node.node.id, lease["group"]["id"], "history", lease["epoch"], 1, chunks, None
        )
    assert not list(snapshot_dir.glob("*"))


def test_snapshot_calls_need_the_epoch_and_a_known_group(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    response = node.http.put(
        lane_path(lease, "snapshot") + "?next=5", data=b"x", content_type="application/gzip"
    )
    assert response.status_code == 400
    assert "epoch" in response.json()["detail"]
    response = node.get("/api/v1/groups/987654/lanes/history/snapshot?epoch=1")
    assert response.status_code == 404


def test_group_names_become_safe_file_names():
    assert file_stem(3, "alt.binaries.test") == "alt.binaries.test"
    assert file_stem(3, "../etc/passwd") == "_etc_passwd_3"
    assert "/" not in file_stem(4, "a/b")
    assert file_stem(5, "..") == "_5"
