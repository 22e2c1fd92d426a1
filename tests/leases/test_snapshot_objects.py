"""Snapshots in S3-compatible object storage (SNAPSHOT_STORAGE=s3), against moto's
server mode over real HTTP, started by the tests on a free loopback port.

Uploads stream through the coordinator into an object of their own; the row
switches to it in the commit; the replaced object is retired, and deleted once
its presigned URLs have expired. A GET
answers 307 to a presigned URL, which the agent follows without its token.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import boto3
import pytest
from django.db.models.functions import Now

from leases import snapshot_objects
from leases.models import GroupLane, RetiredSnapshot
from seed_node.aggregate import Window
from seed_node.control import Context, Control, Settings, Stats
from seed_node.http import Coordinator, LeaseLost, Rejected
from seed_node.window import WindowWorker
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.s3 import CREDENTIALS
from tests.support.snapshots import window_snapshot
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db(transaction=True)

BUCKET = "snapshots"
GROUP = "alt.binaries.objects"


@pytest.fixture
def bucket(s3_endpoint: str, settings) -> object:
    s3 = boto3.resource("s3", endpoint_url=s3_endpoint, region_name="us-east-1", **CREDENTIALS)
    store = s3.Bucket(BUCKET)
    if store.creation_date is None:
        store.create()
    store.objects.all().delete()
    settings.SNAPSHOT_STORAGE = "s3"
    settings.STORAGES = {
        **settings.STORAGES,
        "snapshots": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": s3_endpoint,
                "region_name": "us-east-1",
                "access_key": "testing",
                "secret_key": "testing",
                "querystring_auth": True,
                "default_acl": None,
            },
        },
    }
    return store


@pytest.fixture
def lane(live_server, bucket, tmp_path):
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group)
    node = NodeFactory()
    client = Coordinator(live_server.url, node.token, timeout=30)
    offer = client.post("/groups/lease", {"lane": "history"})["lease"]
    context = Context(None, Settings(work_dir=tmp_path, max_open=1000), Control(), Stats())  # type: ignore[arg-type]
    worker = WindowWorker("w1", client, context, lane="history")
    return worker, f"/groups/{group.id}/lanes/history", offer["epoch"], group


def keys(bucket) -> list[str]:
    return sorted(item.key for item in bucket.objects.all())


@pytest.mark.slow
def test_an_upload_goes_to_an_object_of_its_own_and_replaces_the_last(lane, bucket) -> None:
    worker, path, epoch, group = lane
    window = Window(RuleSet.default(), GROUP, max_open=1000)
    assert worker.upload_snapshot(path, epoch, window, 100)
    first = keys(bucket)
    assert len(first) == 1 and first[0].startswith(f"snapshots/group-{group.id}-history-")
    assert GroupLane.objects.get(group=group, lane="history").snapshot_key == first[0]
    assert worker.upload_snapshot(path, epoch, window, 200)
    row = GroupLane.objects.get(group=group, lane="history")
    # A new key, the row on it; the old object retired (deleted once its URLs expire).
    assert row.snapshot_key not in first and keys(bucket) == sorted([*first, row.snapshot_key])
    assert row.snapshot_next == 200
    assert row.snapshot_size == bucket.Object(row.snapshot_key).content_length
    assert list(RetiredSnapshot.objects.values_list("key", flat=True)) == first


def test_a_url_handed_out_before_a_newer_upload_still_downloads_the_whole_snapshot(
    lane, bucket, settings
) -> None:
    # A reader resolves the key from the row and is handed a URL; a newer upload
    # commits before it downloads. The object it was promised stays (it was
    # deleted after the commit: a 404, and a download under way broke off) until
    # every URL of it has expired, then the upkeep deletes it.
    worker, path, epoch, group = lane
    old = window_snapshot(GROUP, counters={"headers": 1})
    upload(worker, path, epoch, old, 100)
    raw = worker.coordinator.open_stream(f"{path}/snapshot", {"epoch": epoch})
    location = raw.getheader("Location")
    raw.close()
    upload(worker, path, epoch, window_snapshot(GROUP, counters={"headers": 2}), 200)
    with urllib.request.urlopen(location, timeout=10) as response:
        assert response.read() == old
    assert snapshot_objects.remove_expired_objects() == 0  # its URLs are still valid
    RetiredSnapshot.objects.update(
        retired_at=Now() - timedelta(seconds=settings.SNAPSHOT_URL_SECONDS + 61)
    )
    assert snapshot_objects.remove_expired_objects() == 1
    assert keys(bucket) == [GroupLane.objects.get(group=group, lane="history").snapshot_key]
    assert not RetiredSnapshot.objects.exists()


def upload(worker, path, epoch, body: bytes, position: int) -> None:
    spool = Path(worker.settings.work_dir) / "up.gz"
    spool.write_bytes(body)
    worker.coordinator.put_file(
        f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": position}
    )


@pytest.mark.slow
def test_a_get_redirects_to_a_presigned_url_the_agent_follows_without_its_token(
    lane, bucket, live_server
) -> None:
    worker, path, epoch, group = lane
    window = Window(RuleSet.default(), GROUP, max_open=1000)
    assert worker.upload_snapshot(path, epoch, window, 300)
    raw = worker.coordinator.open_stream(f"{path}/snapshot", {"epoch": epoch})
    assert raw.status == 307
    assert raw.getheader("X-Snapshot-Next") == "300"
    location = raw.getheader("Location")
    raw.close()
    assert location.startswith(bucket.meta.client.meta.endpoint_url)
    # The URL is of the object the row names now: the latest upload.
    row = GroupLane.objects.get(group=group, lane="history")
    assert f"/{BUCKET}/{row.snapshot_key}?" in location
    assert "Signature=" in location or "X-Amz-Signature=" in location
    # The bytes come from the store: what the agent restores is the uploaded window.
    restored = worker.download_window(path, epoch, RuleSet.default())
    assert (restored.group, len(restored)) == (GROUP, 0)
    with urllib.request.urlopen(location, timeout=10) as response:
        body = response.read()
    assert len(body) == GroupLane.objects.get(group=group, lane="history").snapshot_size


@pytest.mark.slow
def test_a_stale_epoch_uploads_nothing_and_leaves_the_snapshot(lane, bucket) -> None:
    worker, path, epoch, group = lane
    window = Window(RuleSet.default(), GROUP, max_open=1000)
    assert worker.upload_snapshot(path, epoch, window, 400)
    before = keys(bucket)
    GroupLane.objects.filter(group=group, lane="history").update(epoch=epoch + 1)
    spool = Path(worker.settings.work_dir) / "stale.gz"
    spool.write_bytes(b"\x1f\x8b" + b"x" * 100)
    with pytest.raises(LeaseLost):
        worker.coordinator.put_file(
            f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": 500}
        )
    assert keys(bucket) == before
    assert GroupLane.objects.get(group=group, lane="history").snapshot_next == 400


@pytest.mark.slow
def test_a_body_cut_short_leaves_no_object_and_the_old_snapshot(lane, bucket, settings) -> None:
    worker, path, epoch, group = lane
    window = Window(RuleSet.default(), GROUP, max_open=1000)
    assert worker.upload_snapshot(path, epoch, window, 600)
    before = keys(bucket)
    settings.SNAPSHOT_MAX_BYTES = 50
    spool = Path(worker.settings.work_dir) / "big.gz"
    spool.write_bytes(b"\x1f\x8b" + b"y" * 10_000)
    status = None
    try:
        worker.coordinator.put_file(
            f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": 700}
        )
    except Exception as exc:
        status = getattr(exc, "status", None)
    assert status == 413
    assert keys(bucket) == before
    assert GroupLane.objects.get(group=group, lane="history").snapshot_next == 600


@pytest.mark.slow
@pytest.mark.parametrize(
    ("head", "cause"),
    [
        ({"group": "alt.binaries.other"}, "is of 'alt.binaries.other'"),
        # Looked up in the database from object storage's upload threads.
        ({"rules_version": 99}, "rule set version 99 was never published"),
    ],
)
def test_a_body_that_is_no_snapshot_of_the_lane_leaves_no_object(lane, bucket, head, cause) -> None:
    worker, path, epoch, group = lane
    window = Window(RuleSet.default(), GROUP, max_open=1000)
    assert worker.upload_snapshot(path, epoch, window, 800)
    before = keys(bucket)
    spool = Path(worker.settings.work_dir) / "foreign.gz"
    spool.write_bytes(window_snapshot(GROUP, **head))
    with pytest.raises(Rejected) as refused:
        worker.coordinator.put_file(
            f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": 900}
        )
    assert (refused.value.status, refused.value.code) == (400, "invalid")
    assert cause in refused.value.detail
    assert keys(bucket) == before
    assert GroupLane.objects.get(group=group, lane="history").snapshot_next == 800
