"""Lane snapshots through Django's request handling: store, fetch, fence, limits."""

from __future__ import annotations

import errno
import hashlib
import os
import threading

import pytest
from django.db import DatabaseError

from core.errors import LeaseLost
from leases import services, snapshots
from leases.models import GroupLane
from leases.snapshots import file_stem, legacy_snapshot_path, snapshot_path
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane
from tests.support.small_disk import fill, small_disk
from tests.support.threads import run_threads

# Committed for real: the file replaces the old one only after the commit.
pytestmark = pytest.mark.django_db(transaction=True)


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
    assert snapshot_path(lease["group"]["id"], "history").read_bytes() == body
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
    assert snapshot_path(lease["group"]["id"], "tail").read_bytes() == b"tail window"


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


def test_a_disk_that_fails_is_a_503_and_keeps_the_old_snapshot(
    node_client, snapshot_dir, monkeypatch
):
    node, lease = held_lane(node_client, name="alt.binaries.disk")
    assert put(node, lease, b"old", next_id=10).status_code == 204

    def full_disk(**_kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(snapshots.tempfile, "mkstemp", full_disk)
    response = put(node, lease, b"new", next_id=20)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "could not write the snapshot" in response.json()["detail"]
    response = get(node, lease)
    assert b"".join(response.streaming_content) == b"old"
    assert response["X-Snapshot-Next"] == "10"


@pytest.fixture
def small_snapshot_dir(settings, tmp_path):
    with small_disk(tmp_path / "small", "64k") as directory:
        settings.SNAPSHOT_DIR = directory
        yield directory


def test_a_full_disk_is_a_507_leaves_no_part_and_keeps_the_old_snapshot(
    node_client, small_snapshot_dir
):
    node, lease = held_lane(node_client, name="alt.binaries.full")
    old = os.urandom(20_000)
    assert put(node, lease, old, next_id=10).status_code == 204
    response = put(node, lease, os.urandom(200_000), next_id=20)
    assert response.status_code == 507
    assert response.json()["error"] == "storage_full"
    assert "storage is full" in response.json()["detail"]
    assert response["Retry-After"]
    assert not list(small_snapshot_dir.glob("*.part"))
    response = get(node, lease)
    assert response["X-Snapshot-Next"] == "10"
    served = b"".join(response.streaming_content)
    assert hashlib.sha256(served).digest() == hashlib.sha256(old).digest()
    row = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    assert (row.snapshot_next, row.snapshot_size) == (10, len(old))
    # Full to the last byte, even a small upload fails; once space is freed it goes in.
    filler = fill(small_snapshot_dir)
    assert put(node, lease, b"small", next_id=30).status_code == 507
    filler.unlink()
    assert put(node, lease, b"small", next_id=30).status_code == 204
    assert b"".join(get(node, lease).streaming_content) == b"small"


def test_a_malformed_content_length_is_a_400(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    response = put(node, lease, b"abc", CONTENT_LENGTH="\u00b2")
    assert response.status_code == 400
    assert "Content-Length" in response.json()["detail"]


def test_a_body_over_the_limit_while_streaming_is_a_413(node_client, snapshot_dir, settings):
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


def test_snapshot_files_are_named_by_group_id_and_lane(node_client, snapshot_dir):
    # By name, group "alt.x-tail" (history) and group "alt.x" (tail) shared a file.
    node, history = held_lane(node_client, name="alt.x-tail")
    other, tail = held_lane(node_client, lane="tail", name="alt.x")
    assert put(node, history, b"history of alt.x-tail").status_code == 204
    assert put(other, tail, b"tail of alt.x").status_code == 204
    assert b"".join(get(node, history).streaming_content) == b"history of alt.x-tail"
    assert b"".join(get(other, tail).streaming_content) == b"tail of alt.x"


def test_a_snapshot_stored_under_its_old_name_is_still_served(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name="alt.binaries.legacy")
    assert put(node, lease, b"new", next_id=7).status_code == 204
    group_id = lease["group"]["id"]
    legacy = legacy_snapshot_path(group_id, "alt.binaries.legacy", "history")
    snapshot_path(group_id, "history").rename(legacy)
    assert b"".join(get(node, lease).streaming_content) == b"new"


def test_an_empty_snapshot_is_a_400_and_keeps_the_old_one(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    assert put(node, lease, b"good window", next_id=10).status_code == 204
    response = put(node, lease, b"", next_id=20, CONTENT_LENGTH="0")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert "empty" in response.json()["detail"]
    response = get(node, lease)
    assert b"".join(response.streaming_content) == b"good window"
    assert response["X-Snapshot-Next"] == "10"
    assert not list(snapshot_dir.glob("*.part"))
    with pytest.raises(services.Invalid, match="empty"):  # chunked: no Content-Length
        store(node, lease, iter([]), next_id=20)
    assert not list(snapshot_dir.glob("*.part"))


def test_a_failed_commit_keeps_the_old_file_and_leaves_no_part(
    node_client, snapshot_dir, monkeypatch
):
    node, lease = held_lane(node_client)
    assert put(node, lease, b"old", next_id=10).status_code == 204
    execute = services.queries.execute

    def failing(name, params):
        if name == "record_snapshot":
            raise DatabaseError("the commit failed")
        return execute(name, params)

    monkeypatch.setattr(services.queries, "execute", failing)
    with pytest.raises(DatabaseError):
        store(node, lease, [b"new"], next_id=20)
    assert snapshot_path(lease["group"]["id"], "history").read_bytes() == b"old"
    assert not list(snapshot_dir.glob("*.part"))


def store(node, lease, chunks, next_id):
    return services.store_snapshot(
        node.node.id, lease["group"]["id"], lease["lane"], lease["epoch"], next_id, chunks, None
    )


def test_two_overlapping_uploads_under_one_epoch_end_with_one_whole_snapshot(
    node_client, snapshot_dir
):
    # A resent snapshot overlapping its first attempt: both bodies are written at
    # the same time. Each has its own part; the last to commit wins, whole.
    node, lease = held_lane(node_client)
    halfway = threading.Barrier(2, timeout=30)

    def body(mark):
        yield mark * 100_000
        halfway.wait()
        yield mark * 100_000

    def upload(mark, next_id):
        try:
            return store(node, lease, body(mark), next_id)
        except LeaseLost:
            return "409"

    sizes = run_threads([lambda: upload(b"a", 100), lambda: upload(b"b", 200)])
    assert sizes == [200_000, 200_000]
    data = snapshot_path(lease["group"]["id"], "history").read_bytes()
    assert data in (b"a" * 200_000, b"b" * 200_000)
    row = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    assert (row.snapshot_next, row.snapshot_size) == (100 if data[:1] == b"a" else 200, len(data))
    assert not list(snapshot_dir.glob("*.part"))


def test_a_snapshot_directory_that_cannot_be_made_is_a_503_not_a_500(
    node_client, settings, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    settings.SNAPSHOT_DIR = blocker / "snapshots"
    node, lease = held_lane(node_client)
    for response in (put(node, lease, b"window"), get(node, lease)):
        assert response.status_code == 503
        assert response.json()["error"] == "unavailable"
