"""Lane snapshots through Django's request handling: store, fetch, fence, limits."""

from __future__ import annotations

import errno
import hashlib
import threading

import pytest
from django.db import DatabaseError

from core.errors import UploadInProgress
from leases import services, snapshots
from leases.models import GroupLane
from leases.snapshots import file_stem, legacy_snapshot_path, snapshot_path
from tests.support.factories import GroupFactory, SeedRangeFactory
from tests.support.lanes import lane_path, lease_lane, next_range
from tests.support.small_disk import fill, small_disk
from tests.support.snapshots import padded_files, window_snapshot
from tests.support.threads import run_threads

# Committed for real: the file replaces the old one only after the commit.
pytestmark = pytest.mark.django_db(transaction=True)


def held_lane(node_client, lane="history", **group):
    grp = GroupFactory(**group)
    priority = 5 if lane == "tail" else 100
    SeedRangeFactory(group=grp, priority=priority, start_id=RANGE_START, end_id=9_999)
    # Not handed out: no snapshot may hold its articles; the lane's next holder takes it.
    SeedRangeFactory(group=grp, priority=priority, start_id=10_000, end_id=19_999)
    node = node_client()
    lease = lease_lane(node, lane)["lease"]
    assert lease["group"]["id"] == grp.id
    # Handed out: a window holds only articles of the ranges its lane handed out.
    assert next_range(node, lease)["start"] == RANGE_START
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


def snap(lease, mark=0, size=0):
    """A snapshot of the lease's lane, told apart by `mark`; about `size` bytes of lines."""
    files = padded_files(RANGE_START, size, tag=f"m{mark}") if size else ()
    return window_snapshot(lease["group"]["name"], files, counters={"headers": mark})


def stored_snapshot(lease, size):
    """A snapshot of about `size` bytes that gzip does not shrink (stored blocks)."""
    return window_snapshot(lease["group"]["name"], padded_files(RANGE_START, size), level=0)


RANGE_START = 1_000  # the first article of held_lane's range


@pytest.mark.slow
def test_a_snapshot_is_stored_and_served_with_its_article(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name="alt.binaries.snap")
    assert get(node, lease).status_code == 404
    body = snap(lease, size=100_000)
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


@pytest.mark.slow
def test_the_tail_lane_has_its_own_snapshot(node_client, snapshot_dir):
    node, lease = held_lane(node_client, lane="tail", name="alt.binaries.tails")
    assert put(node, lease, snap(lease, 1)).status_code == 204
    assert snapshot_path(lease["group"]["id"], "tail").read_bytes() == snap(lease, 1)


@pytest.mark.slow
def test_a_new_snapshot_replaces_the_old_one_and_the_next_holder_gets_it(
    node_client, snapshot_dir, backdate_lane, settings
):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=2000).status_code == 204
    assert put(node, lease, snap(lease, 2), next_id=2500).status_code == 204
    backdate_lane(lease["group"]["id"], "history", settings.LEASE_TTL_SECONDS + 1)
    other = node_client()
    new = lease_lane(other)["lease"]
    size = len(snap(lease, 2))
    assert new["snapshot"] == {"next": 2500, "size": size, "first": RANGE_START, "last": 9_999}
    response = get(other, new)
    assert b"".join(response.streaming_content) == snap(lease, 2)
    assert get(node, lease).status_code == 409


@pytest.mark.slow
def test_a_snapshot_over_the_limit_is_a_413_and_keeps_the_old_one(
    node_client, snapshot_dir, settings
):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=10).status_code == 204
    settings.SNAPSHOT_MAX_BYTES = 100
    response = put(node, lease, b"y" * 101)
    assert response.status_code == 413
    assert response.json()["error"] == "too_large"
    response = get(node, lease)
    assert b"".join(response.streaming_content) == snap(lease, 1)
    assert response["X-Snapshot-Next"] == "10"
    assert not list(snapshot_dir.glob("*.part"))


@pytest.mark.slow
def test_a_disk_that_fails_is_a_503_and_keeps_the_old_snapshot(
    node_client, snapshot_dir, monkeypatch
):
    node, lease = held_lane(node_client, name="alt.binaries.disk")
    assert put(node, lease, snap(lease, 1), next_id=10).status_code == 204

    def full_disk(**_kwargs):
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(snapshots.tempfile, "mkstemp", full_disk)
    response = put(node, lease, snap(lease, 2), next_id=20)
    assert response.status_code == 503
    assert response.json()["error"] == "unavailable"
    assert "could not write the snapshot" in response.json()["detail"]
    response = get(node, lease)
    assert b"".join(response.streaming_content) == snap(lease, 1)
    assert response["X-Snapshot-Next"] == "10"


@pytest.fixture
def small_snapshot_dir(settings, tmp_path):
    with small_disk(tmp_path / "small", "64k") as directory:
        settings.SNAPSHOT_DIR = directory
        settings.SNAPSHOT_KEEP_FREE_BYTES = 0  # only the full disk refuses here
        yield directory


@pytest.mark.slow
def test_a_full_disk_is_a_507_leaves_no_part_and_keeps_the_old_snapshot(
    node_client, small_snapshot_dir
):
    node, lease = held_lane(node_client, name="alt.binaries.full")
    old = snap(lease, 1, size=20_000)
    assert put(node, lease, old, next_id=10).status_code == 204
    response = put(node, lease, stored_snapshot(lease, 200_000), next_id=20)
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
    assert put(node, lease, snap(lease, 3), next_id=30).status_code == 507
    filler.unlink()
    assert put(node, lease, snap(lease, 3), next_id=30).status_code == 204
    assert b"".join(get(node, lease).streaming_content) == snap(lease, 3)


@pytest.mark.slow
def test_a_malformed_content_length_is_a_400(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    response = put(node, lease, b"abc", CONTENT_LENGTH="\u00b2")
    assert response.status_code == 400
    assert "Content-Length" in response.json()["detail"]


@pytest.mark.slow
def test_a_body_over_the_limit_while_streaming_is_a_413(node_client, snapshot_dir, settings):
    node, lease = held_lane(node_client)
    settings.SNAPSHOT_MAX_BYTES = 3 * snapshots.CHUNK_BYTES
    body = stored_snapshot(lease, 5 * snapshots.CHUNK_BYTES)
    step = snapshots.CHUNK_BYTES
    chunks = (body[i : i + step] for i in range(0, len(body), step))  # chunked: no length
    with pytest.raises(services.TooLarge):
        services.store_snapshot(
            node.node.id, lease["group"]["id"], "history", lease["epoch"], 1, chunks, None
        )
    assert not list(snapshot_dir.glob("*"))


@pytest.mark.slow
def test_snapshot_calls_need_the_epoch_and_a_known_group(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    response = node.http.put(
        lane_path(lease, "snapshot") + "?next=5", data=b"x", content_type="application/gzip"
    )
    assert response.status_code == 400
    assert "epoch" in response.json()["detail"]
    response = node.get("/api/v1/groups/987654/lanes/history/snapshot?epoch=1")
    assert response.status_code == 404


@pytest.mark.slow
def test_group_names_become_safe_file_names():
    assert file_stem(3, "alt.binaries.test") == "alt.binaries.test"
    assert file_stem(3, "../etc/passwd") == "_etc_passwd_3"
    assert "/" not in file_stem(4, "a/b")
    assert file_stem(5, "..") == "_5"


@pytest.mark.slow
def test_snapshot_files_are_named_by_group_id_and_lane(node_client, snapshot_dir):
    # By name, group "alt.x-tail" (history) and group "alt.x" (tail) shared a file.
    node, history = held_lane(node_client, name="alt.x-tail")
    other, tail = held_lane(node_client, lane="tail", name="alt.x")
    assert put(node, history, snap(history, 1)).status_code == 204
    assert put(other, tail, snap(tail, 2)).status_code == 204
    assert b"".join(get(node, history).streaming_content) == snap(history, 1)
    assert b"".join(get(other, tail).streaming_content) == snap(tail, 2)


def test_a_snapshot_stored_under_its_old_name_is_still_served(node_client, snapshot_dir):
    node, lease = held_lane(node_client, name="alt.binaries.legacy")
    assert put(node, lease, snap(lease, 1), next_id=7).status_code == 204
    group_id = lease["group"]["id"]
    legacy = legacy_snapshot_path(group_id, "alt.binaries.legacy", "history")
    snapshot_path(group_id, "history").rename(legacy)
    assert b"".join(get(node, lease).streaming_content) == snap(lease, 1)


@pytest.mark.slow
def test_an_empty_snapshot_is_a_400_and_keeps_the_old_one(node_client, snapshot_dir):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=10).status_code == 204
    response = put(node, lease, b"", next_id=20, CONTENT_LENGTH="0")
    assert response.status_code == 400
    assert response.json()["error"] == "invalid"
    assert "empty" in response.json()["detail"]
    response = get(node, lease)
    assert b"".join(response.streaming_content) == snap(lease, 1)
    assert response["X-Snapshot-Next"] == "10"
    assert not list(snapshot_dir.glob("*.part"))
    with pytest.raises(services.Invalid, match="empty"):  # chunked: no Content-Length
        store(node, lease, iter([]), next_id=20)
    assert not list(snapshot_dir.glob("*.part"))


@pytest.mark.slow
def test_a_failed_commit_keeps_the_old_file_and_leaves_no_part(
    node_client, snapshot_dir, monkeypatch
):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=10).status_code == 204
    execute = services.queries.execute

    def failing(name, params):
        if name == "record_snapshot":
            raise DatabaseError("the commit failed")
        return execute(name, params)

    monkeypatch.setattr(services.queries, "execute", failing)
    with pytest.raises(DatabaseError):
        store(node, lease, [snap(lease, 2)], next_id=20)
    assert snapshot_path(lease["group"]["id"], "history").read_bytes() == snap(lease, 1)
    assert not list(snapshot_dir.glob("*.part"))


def store(node, lease, chunks, next_id):
    return services.store_snapshot(
        node.node.id, lease["group"]["id"], lease["lane"], lease["epoch"], next_id, chunks, None
    )


@pytest.mark.slow
def test_a_second_upload_while_one_streams_is_a_429_and_the_first_is_stored_whole(
    node_client, snapshot_dir
):
    # A resend overlapping its first attempt (or a node sending many at once):
    # one upload of a lane streams at a time, the other is refused before a
    # byte of it is read, with a Retry-After, and leaves nothing behind.
    node, lease = held_lane(node_client)
    first = snap(lease, 1, size=200_000)
    streaming, refused = threading.Event(), threading.Event()
    read_of_second = []

    def first_body():
        yield first[:1000]
        streaming.set()
        assert refused.wait(30)
        yield first[1000:]

    def second_body():
        read_of_second.append(True)
        yield snap(lease, 2)

    def second():
        assert streaming.wait(30)
        try:
            return store(node, lease, second_body(), 200)
        except UploadInProgress as exc:
            return exc
        finally:
            refused.set()

    size, error = run_threads([lambda: store(node, lease, first_body(), 100), second])
    assert size == len(first)
    assert isinstance(error, UploadInProgress)
    assert error.retry_after > 0 and "one runs at a time" in error.detail
    assert read_of_second == []
    assert snapshot_path(lease["group"]["id"], "history").read_bytes() == first
    row = GroupLane.objects.get(group_id=lease["group"]["id"], lane="history")
    assert (row.snapshot_next, row.snapshot_size) == (100, len(first))
    assert not list(snapshot_dir.glob("*.part"))
    # Once the first is stored, the lane takes the next upload.
    assert store(node, lease, [snap(lease, 3)], 300) == len(snap(lease, 3))


@pytest.mark.slow
def test_a_snapshot_directory_that_cannot_be_made_is_a_503_not_a_500(
    node_client, settings, tmp_path
):
    blocker = tmp_path / "a-file"
    blocker.write_text("in the way")
    settings.SNAPSHOT_DIR = blocker / "snapshots"
    node, lease = held_lane(node_client)
    for response in (put(node, lease, snap(lease)), get(node, lease)):
        assert response.status_code == 503
        assert response.json()["error"] == "unavailable"
