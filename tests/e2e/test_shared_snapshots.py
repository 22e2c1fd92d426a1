"""Two coordinator hosts, one snapshot store: a snapshot handed out is always the latest.

Two gunicorn hosts share a fresh database and a snapshot store: a shared
directory, or S3-compatible object storage (moto's server, over HTTP). A node
holding a lane uploads through one host and fetches through the other. Each
body names its own position, so a fetch proves it got the bytes its
X-Snapshot-Next promises; while uploads keep coming through host A, fetches
through host B never see a mismatched or older snapshot.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from seed_node.http import Coordinator
from tests.support.fleet import Fleet, fresh_database
from tests.support.s3 import CREDENTIALS, s3_endpoint  # noqa: F401
from tests.support.snapshots import window_snapshot

pytestmark = pytest.mark.e2e

GROUP = "alt.binaries.shared.snapshots"


def body_at(position: int) -> bytes:
    """A snapshot of the lane, told apart by its position (an empty window's counters)."""
    return window_snapshot(GROUP, counters={"headers": position, "binary": position % 7})


def fetch(client: Coordinator, path: str, epoch: int) -> tuple[int, bytes]:
    headers, stream = client.open_followed(f"{path}/snapshot", {"epoch": epoch})
    with stream:
        return int(headers["X-Snapshot-Next"]), stream.read()


def upload(client: Coordinator, path: str, epoch: int, position: int, spool: Path) -> None:
    spool.write_bytes(body_at(position))
    client.put_file(
        f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": position}
    )


@pytest.fixture(params=["filesystem", "s3"])
def hosts(request, tmp_path: Path) -> Iterator[tuple[Fleet, Fleet]]:
    if request.param == "s3":
        endpoint = request.getfixturevalue("s3_endpoint")
        bucket = f"shared-{tmp_path.name[-8:].lower().replace('_', '-')}"
        boto3.client(
            "s3", endpoint_url=endpoint, region_name="us-east-1", **CREDENTIALS
        ).create_bucket(Bucket=bucket)
        store = {
            "SNAPSHOT_STORAGE": "s3",
            "SNAPSHOT_S3_BUCKET": bucket,
            "SNAPSHOT_S3_ENDPOINT_URL": endpoint,
            "SNAPSHOT_S3_REGION": "us-east-1",
            "SNAPSHOT_S3_ACCESS_KEY_ID": "testing",
            "SNAPSHOT_S3_SECRET_ACCESS_KEY": "testing",
        }
    else:
        store = {"SNAPSHOT_DIR": str(tmp_path / "snapshots")}
    with fresh_database() as (url, conninfo):
        host_a = Fleet(url, conninfo, tmp_path / "a")
        host_b = Fleet(url, conninfo, tmp_path / "b")
        for host in (host_a, host_b):
            host.workdir.mkdir()
            host.server_env = store
        try:
            host_a.start()
            host_b.start()
            yield host_a, host_b
        finally:
            host_b.stop()
            host_a.stop()


def test_a_snapshot_fetched_through_either_host_is_the_latest(
    hosts: tuple[Fleet, Fleet], tmp_path: Path
) -> None:
    host_a, host_b = hosts
    host_a.python(
        "from tests.support.factories import GroupFactory, SeedRangeFactory\n"
        "SeedRangeFactory(group=GroupFactory(name=sys.argv[1]))\n",
        GROUP,
    )
    token = host_a.issue_token("holder").read_text().strip()
    via_a = Coordinator(host_a.url, token, timeout=30)
    via_b = Coordinator(host_b.url, token, timeout=30)
    offer = via_a.post("/groups/lease", {"lane": "history"})["lease"]
    path, epoch = f"/groups/{offer['group']['id']}/lanes/history", offer["epoch"]

    # Uploads alternate between the hosts; each fetch goes through the other one.
    for position in range(10, 70, 10):
        writer, reader = (via_a, via_b) if position % 20 else (via_b, via_a)
        upload(writer, path, epoch, position, tmp_path / "up.gz")
        assert fetch(reader, path, epoch) == (position, body_at(position))

    # Uploads keep coming through A while B hands the snapshot out.
    done = threading.Event()
    errors: list[BaseException] = []

    def keep_uploading() -> None:
        try:
            for position in range(100, 400, 10):
                upload(via_a, path, epoch, position, tmp_path / "busy.gz")
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    uploader = threading.Thread(target=keep_uploading)
    uploader.start()
    seen = []
    while not done.is_set():
        position, body = fetch(via_b, path, epoch)
        assert body == body_at(position), position  # the bytes its header promises
        seen.append(position)
    uploader.join()
    assert not errors, errors
    assert seen == sorted(seen)  # never an older snapshot after a newer one
    assert fetch(via_b, path, epoch) == (390, body_at(390))
