"""What a node may pile onto the snapshot disk: one upload per lane at a time,
and none that would leave less free than the limits keep.

The guard is a PostgreSQL session lock (leases/upload_guard.py), so it holds
across workers and hosts; a host that dies mid-upload without closing its
connection leaves the session idle, and PostgreSQL ends it. The free space is
read from the disk itself (statvfs), before a byte is read when the size is
known and again with every chunk.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from django.conf import settings as django_settings

from catalog.rulesets import forget_current_rules
from catalog.services import publish_rules
from core.api.errors import response_for_unhandled
from core.errors import LeaseLost, StorageFull, Unavailable, UploadInProgress
from indexer.space import database_size, free_bytes, kept_free
from leases import services, upload_guard
from leases.models import GroupLane
from leases.upload_guard import Holder, UploadGuards, one_upload
from tests.leases.test_snapshots import get, held_lane, put, snap, store, stored_snapshot
from tests.support.lanes import lease_lane
from tests.support.small_disk import fill, small_disk
from tests.support.snapshots import window_snapshot
from tests.support.threads import run_threads
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db(transaction=True)

GiB = 1 << 30


def lane_id(lease) -> int:
    return GroupLane.objects.get(group_id=lease["group"]["id"], lane=lease["lane"]).id


def upload_of(node, lease) -> Holder:
    """Whose upload a guard is: the node's, of the lease's lane at its epoch."""
    return Holder(lane_id(lease), node.node.id, lease["epoch"])


@pytest.mark.slow
def test_an_upload_while_another_holds_the_lane_is_a_429_with_retry_after(
    node_client, snapshot_dir
):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=1100).status_code == 204
    with one_upload(upload_of(node, lease)):  # another worker or host streaming this upload
        response = put(node, lease, snap(lease, 2), next_id=1200)
    assert response.status_code == 429
    assert response.json()["error"] == "upload_in_progress"
    assert "one runs at a time" in response.json()["detail"]
    assert int(response["Retry-After"]) > 0
    assert get(node, lease)["X-Snapshot-Next"] == "1100"
    # Other lanes upload meanwhile; this one again once the other upload ends.
    other, tail = held_lane(node_client, lane="tail")
    with one_upload(upload_of(node, lease)):
        assert put(other, tail, snap(tail, 3)).status_code == 204
    assert put(node, lease, snap(lease, 2), next_id=1200).status_code == 204


@pytest.mark.slow
def test_a_guard_whose_host_went_silent_is_freed_by_the_database(node_client, snapshot_dir):
    # A host that dies mid-upload (power, network) never closes its session: the
    # guard's session goes idle and PostgreSQL ends it (idle_session_timeout).
    node, lease = held_lane(node_client)
    # Its own session, as another host's; no keeper: the host is gone.
    other_host = UploadGuards(idle_seconds=1, keeper=False)
    with one_upload(upload_of(node, lease), other_host) as silent:
        with pytest.raises(UploadInProgress):
            with one_upload(upload_of(node, lease)):
                pass
        deadline = time.monotonic() + 30
        while True:  # polls the database's state; the bound only stops a broken run
            try:
                with one_upload(upload_of(node, lease)):
                    break
            except UploadInProgress:
                assert time.monotonic() < deadline, "the silent host's guard was never freed"
                time.sleep(0.2)
        # Were the silent upload to wake, it finds its hold gone and stops.
        with pytest.raises(Unavailable, match="lost its hold"):
            silent.keep()
    assert put(node, lease, snap(lease, 1)).status_code == 204


@pytest.mark.slow
def test_an_upload_that_would_leave_less_than_the_kept_space_is_a_507_before_a_byte_is_read(
    node_client, snapshot_dir, settings
):
    node, lease = held_lane(node_client)
    assert put(node, lease, snap(lease, 1), next_id=1100).status_code == 204
    settings.SNAPSHOT_KEEP_FREE_BYTES = free_bytes(snapshot_dir) + GiB
    read = []

    def body():
        read.append(True)
        yield snap(lease, 2)

    for length in (len(snap(lease, 2)), None):  # with a Content-Length, and chunked
        with pytest.raises(StorageFull, match=r"keeps \d+ bytes free \(SNAPSHOT_KEEP_FREE_BYTES"):
            services_store(node, lease, body(), 1200, length)
    assert read == []  # refused before a byte of the body is read, either way
    response = put(node, lease, snap(lease, 2), next_id=1200)
    assert response.status_code == 507
    assert response.json()["error"] == "storage_full"
    assert response["Retry-After"]
    assert get(node, lease)["X-Snapshot-Next"] == "1100"
    assert not list(snapshot_dir.glob("*.part"))
    settings.SNAPSHOT_KEEP_FREE_BYTES = 0
    assert put(node, lease, snap(lease, 2), next_id=1200).status_code == 204


def services_store(node, lease, chunks, next_id, length):
    return services.store_snapshot(
        node.node.id, lease["group"]["id"], lease["lane"], lease["epoch"], next_id, chunks, length
    )


@pytest.fixture
def beside_the_database(settings, tmp_path):
    """A snapshot directory on the embedded database's disk (the default layout)."""
    data_dir = django_settings.DATABASES["default"].get("EMBEDDED_DIR")
    if not django_settings.EMBEDDED_DATABASE or not data_dir:
        pytest.skip("needs the embedded database")
    directory = tmp_path / "snapshots"
    directory.mkdir()
    if os.stat(directory).st_dev != os.stat(data_dir).st_dev:
        pytest.skip("the test's temporary directory is not on the database's disk")
    settings.SNAPSHOT_DIR = directory
    settings.SNAPSHOT_KEEP_FREE_BYTES = 0
    return directory


@pytest.mark.slow
def test_the_room_the_database_limit_keeps_is_not_given_to_snapshots(
    node_client, beside_the_database, settings
):
    node, lease = held_lane(node_client)
    assert kept_free(beside_the_database) == 0  # DB_MAX_BYTES unset: nothing kept for it
    # The database may grow by more than the disk has left: no upload may take it.
    settings.DB_MAX_BYTES = database_size() + free_bytes(beside_the_database) + GiB
    assert kept_free(beside_the_database) > free_bytes(beside_the_database)
    response = put(node, lease, snap(lease, 1))
    assert response.status_code == 507
    assert "DB_MAX_BYTES" in response.json()["detail"]
    settings.DB_MAX_BYTES = database_size()  # at its limit: nothing more to keep
    assert put(node, lease, snap(lease, 1)).status_code == 204


@pytest.mark.slow
def test_a_disk_filled_by_other_uploads_stops_this_one_midway(node_client, settings, tmp_path):
    with small_disk(tmp_path / "small", "1m") as directory:
        settings.SNAPSHOT_DIR = directory
        settings.SNAPSHOT_KEEP_FREE_BYTES = 256 << 10
        node, lease = held_lane(node_client)
        body = stored_snapshot(lease, 400_000)
        step = 64 << 10
        pieces = [body[i : i + step] for i in range(0, len(body), step)]

        def chunks():
            yield pieces[0]
            # Meanwhile another lane's upload takes the disk down to the last 100 KiB.
            filler = fill(directory)
            with filler.open("r+b") as out:
                out.truncate(filler.stat().st_size - (100 << 10))
            yield from pieces[1:]

        with pytest.raises(StorageFull, match=r"has \d+ bytes still to write"):
            store(node, lease, chunks(), 1500)
        assert not list(directory.glob("*.part"))
        assert GroupLane.objects.get(id=lane_id(lease)).snapshot_next is None


@pytest.mark.slow
def test_a_processs_uploads_share_one_session_closed_with_the_last(node_client, snapshot_dir):
    # One database session per worker process however many uploads it streams
    # (the connection budget counts one), and none while it streams none.
    node, history = held_lane(node_client)
    other, tail = held_lane(node_client, lane="tail")
    guards = UploadGuards()
    first_upload, second_upload = upload_of(node, history), upload_of(other, tail)
    with one_upload(first_upload, guards) as first, one_upload(second_upload, guards) as second:
        assert first.session is second.session is not None
        with pytest.raises(UploadInProgress):  # the same lane again, from this process
            guards.take(first_upload)
    assert guards.session is None
    with one_upload(first_upload, guards):  # free again, on a new session
        assert guards.session is not None


def test_a_fenced_holders_upload_does_not_lock_out_the_new_holder(
    node_client, snapshot_dir, backdate_lane, settings
):
    # The guard is keyed by the lane and the epoch: an old holder whose upload
    # still streams (an 8 GiB body may take days at the slowest rate the body
    # rules allow) keeps only its own epoch's lock, and the new holder uploads.
    # (It used to get 429s all that time, and the agent retried them forever.)
    old_node, old = held_lane(node_client)
    body = snap(old, 1, size=200_000)
    streaming, tried = threading.Event(), threading.Event()

    def trickle():  # the old holder's upload, still arriving
        yield body[:1000]
        streaming.set()
        assert tried.wait(30)
        yield body[1000:]

    def old_upload():
        try:
            return store(old_node, old, trickle(), 100)
        except (LeaseLost, UploadInProgress) as exc:
            return exc

    def new_holder():
        assert streaming.wait(30)
        try:
            backdate_lane(old["group"]["id"], "history", settings.LEASE_TTL_SECONDS + 1)
            new_node = node_client()
            new = lease_lane(new_node)["lease"]
            assert new["epoch"] != old["epoch"]
            return put(new_node, new, snap(new, 2), next_id=200).status_code
        finally:
            tried.set()

    old_result, status = run_threads([old_upload, new_holder])
    assert status == 204, f"the lane's holder was refused ({status}) while a fenced upload streamed"
    assert isinstance(old_result, LeaseLost)  # and the fenced one stored nothing
    assert GroupLane.objects.get(id=lane_id(old)).snapshot_next == 200


def test_a_fenced_holders_upload_is_stopped_while_it_streams(
    node_client, snapshot_dir, backdate_lane, settings, monkeypatch
):
    # The guards' keeper checks each upload's holder and epoch: once the lane is
    # another node's, the old upload ends at its next chunk (409), its part
    # removed, instead of filling the disk until its body ends.
    monkeypatch.setattr(upload_guard, "GUARDS", UploadGuards(keep_seconds=0.05))
    old_node, old = held_lane(node_client)
    body = snap(old, 1, size=400_000)
    sent = []

    def trickle():
        yield body[:1000]
        backdate_lane(old["group"]["id"], "history", settings.LEASE_TTL_SECONDS + 1)
        lease_lane(node_client())  # the lane passes to another node, at a new epoch
        for start in range(1000, len(body), 100):
            sent.append(start)
            time.sleep(0.01)  # a slow sender: the keeper looks meanwhile
            yield body[start : start + 100]

    with pytest.raises(LeaseLost, match="ended while its snapshot was uploading"):
        store(old_node, old, trickle(), 100)
    assert sent[-1] < len(body) - 100  # stopped mid-body, not at its end
    assert not list(snapshot_dir.glob("*.part"))
    assert GroupLane.objects.get(id=lane_id(old)).snapshot_next is None


def test_a_guard_outlives_an_upload_that_sends_nothing_for_longer_than_the_idle_timeout(
    node_client, snapshot_dir
):
    # The keeper touches the guards' session on a timer, not as chunks arrive:
    # an upload slower than the idle timeout (chunks under ~8.7 KiB/s at 120 s)
    # keeps its lock, as the body rules allow; its session used to end (503).
    node, lease = held_lane(node_client)
    guards = UploadGuards(idle_seconds=3)
    with one_upload(upload_of(node, lease), guards) as quiet:
        time.sleep(7)  # no chunk for more than twice the idle timeout
        quiet.keep()
        with pytest.raises(UploadInProgress):  # still held, in the database too
            with one_upload(upload_of(node, lease), UploadGuards()):
                pass
    assert guards.session is None  # closed with its last upload, and its keeper with it


def test_a_guard_session_gone_before_the_header_is_read_is_a_503_not_a_500(
    node_client, snapshot_dir
):
    # A header naming a rule set that is not the current one is read on the
    # guards' own session (a raw psycopg connection), which any thread's failure
    # or a database restart may close: psycopg's own OperationalError is not
    # Django's, and it was a 500.
    node, lease = held_lane(node_client)
    older = publish_rules(RuleSet.default().to_dict(), note="older").version
    publish_rules(RuleSet.default().to_dict(), note="current")
    forget_current_rules()  # this process's cache may hold another version
    body = window_snapshot(lease["group"]["name"], rules_version=older)

    def chunks():
        upload_guard.GUARDS.session.close()  # as another thread's failure does
        yield body

    with pytest.raises(Unavailable) as refused:
        store(node, lease, chunks(), 100)
    response = response_for_unhandled(refused.value)
    assert response.status_code == 503 and response["Retry-After"]
    assert "send the snapshot again" in json.loads(response.content)["detail"]
    assert put(node, lease, body, next_id=100).status_code == 204  # a new session next time
