"""A lane snapshot is another node's output: the agent reads it as untrusted input.

Against a real coordinator (live_server: Django serving HTTP in a thread, the
test database committed): a bad snapshot is put in the lane's place (as one
stored before the coordinator checked uploads, which now refuses these), then
the next holder's WindowWorker restores the lane. A malformed one must start
the window empty at the lane's snapshot position, count and log the reset, and
be replaced with the empty window so the lane goes on. A well-formed one whose
files do not belong to the lane keeps the files that do.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from django.db.models.functions import Now

from leases.models import GroupLane
from leases.snapshots import snapshot_path
from seed_node.aggregate import Window
from seed_node.control import Context, Control, Settings, Stats
from seed_node.http import Coordinator
from seed_node.window import WindowWorker
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.snapshots import file_entry, window_snapshot
from usenet.rules import RuleSet

pytestmark = pytest.mark.django_db(transaction=True)

RULES = RuleSet.default()
GROUP = "alt.binaries.untrusted"
POSITION = 4321


def gz(*lines: bytes) -> bytes:
    return gzip.compress(b"".join(lines), compresslevel=9)


def header(**change) -> bytes:
    fields = {"format": 1, "group": GROUP, "rules_version": 1, "max_open": 100, "counters": {}}
    return json.dumps({**fields, **change}).encode() + b"\n"


def file_line(**change) -> bytes:
    fields = {
        "subject": '"a.rar" yEnc (1/3)',
        "poster": "p <p@x>",
        "date": 1700000000,
        "total": 3,
        "segments": [[1, 10, "<a1@x>", 500]],
    }
    return json.dumps({**fields, **change}).encode() + b"\n"


BAD_SNAPSHOTS = {
    # 64 MB of zeros in one line, ~64 KB compressed: never held in memory whole.
    "a gzip bomb": (gz(b"\0" * (64 << 20)), "a line is over"),
    "not gzip": (b"this is not gzip", "not a readable gzip stream"),
    "a missing key": (gz(header(), file_line(segments=None)), "missing or out-of-range"),
    "a huge total": (gz(header(), file_line(total=10**12)), "missing or out-of-range"),
    "more segments than its total": (
        gz(header(), file_line(segments=[[1, n, f"<{n}@x>", 1] for n in range(5)])),
        "missing or out-of-range",
    ),
    "a header of the wrong type": (gz(b"[1, 2, 3]\n"), "no header line"),
    "unknown counters": (gz(header(counters={"evil": 10**30})), "unknown or negative"),
    "another group": (gz(header(group="alt.other")), "is of 'alt.other'"),
}


@pytest.fixture
def lane(live_server, settings, tmp_path):
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    group = GroupFactory(name=GROUP)
    SeedRangeFactory(group=group, start_id=1, end_id=9_999)
    SeedRangeFactory(group=group, start_id=10_000, end_id=19_999)  # not handed out
    node = NodeFactory()
    client = Coordinator(live_server.url, node.token, timeout=30)
    offer = client.post("/groups/lease", {"lane": "history"})["lease"]
    path = f"/groups/{group.id}/lanes/history"
    # Handed out: a snapshot holds only articles of the ranges its lane handed out.
    assert client.post(f"{path}/next", {"epoch": offer["epoch"]})["range"]["start"] == 1
    # No news server: restoring reads only the coordinator.
    context = Context(None, Settings(work_dir=tmp_path, max_open=1000), Control(), Stats())  # type: ignore[arg-type]
    worker = WindowWorker("w1", client, context, lane="history")
    return worker, path, offer["epoch"], tmp_path


def upload(worker, path, epoch, body: bytes, tmp_path: Path) -> None:
    spool = tmp_path / "upload.gz"
    spool.write_bytes(body)
    worker.coordinator.put_file(
        f"{path}/snapshot", spool, "application/gzip", {"epoch": epoch, "next": POSITION}
    )


def plant(body: bytes) -> None:
    """Make `body` the lane's snapshot without the upload's checks."""
    row = GroupLane.objects.get(group__name=GROUP, lane="history")
    final = snapshot_path(row.group_id, "history")
    final.parent.mkdir(parents=True, exist_ok=True)
    final.write_bytes(body)
    GroupLane.objects.filter(id=row.id).update(snapshot_next=POSITION, snapshot_size=len(body))


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(BAD_SNAPSHOTS))
def test_a_bad_snapshot_starts_the_window_empty_and_is_replaced(lane, case, caplog):
    worker, path, epoch, _tmp_path = lane
    body, cause = BAD_SNAPSHOTS[case]
    plant(body)
    with caplog.at_level(logging.WARNING, logger="seed_node.window"):
        window = worker.restore(path, epoch, GROUP, RULES, {"next": POSITION, "size": len(body)})
    assert (len(window), window.group, window.counters()["binary"]) == (0, GROUP, 0)
    assert worker.stats.snapshot()["snapshot_resets"] == 1
    assert cause in caplog.text and f"starts empty at article {POSITION}" in caplog.text
    # The lane's snapshot is now the empty window, at the same position.
    response = worker.coordinator.open_stream(f"{path}/snapshot", {"epoch": epoch})
    with response:
        assert response.headers["X-Snapshot-Next"] == str(POSITION)
        replaced = Window.restore(io.BytesIO(response.read()), RULES)
    assert (replaced.group, len(replaced)) == (GROUP, 0)


@pytest.mark.slow
def test_a_good_snapshot_is_restored(lane):
    worker, path, epoch, tmp_path = lane
    good = Window(RULES, GROUP)
    good.add_line(
        b'10\t"a.rar" yEnc (1/3)\tp <p@x>\t14 Nov 2023 22:13:20 GMT\t<a1@x>\t\t500\t5\r\n'
    )
    spool = io.BytesIO()
    good.serialize(spool)
    upload(worker, path, epoch, spool.getvalue(), tmp_path)
    window = worker.restore(path, epoch, GROUP, RULES, {"next": POSITION, "size": 1})
    assert len(window) == 1
    assert worker.stats.snapshot()["snapshot_resets"] == 0


@pytest.mark.slow
def test_files_of_a_snapshot_that_are_not_the_lanes_are_dropped_and_logged(lane, caplog):
    # Well-formed, but a fragment lies outside the lane's articles (1..9,999) and
    # a file is not a binary post: reported by the next holder, they would enter
    # the catalog under its name. The lease names the lane's articles.
    worker, path, _epoch, _tmp_path = lane
    plant(
        window_snapshot(
            GROUP,
            [
                file_entry(10, name="good.rar"),
                file_entry(70_000, name="planted.rar", fragment=True),
                file_entry(20, subject="not a binary post"),
            ],
        )
    )
    GroupLane.objects.filter(group__name=GROUP).update(heartbeat_at=Now() - timedelta(days=1))
    taker = Coordinator(worker.coordinator.base_url, NodeFactory().token, timeout=30)
    offer = taker.post("/groups/lease", {"lane": "history"})["lease"]
    assert (offer["snapshot"]["first"], offer["snapshot"]["last"]) == (1, 9_999)
    worker = WindowWorker("w2", taker, worker.context, lane="history")
    with caplog.at_level(logging.WARNING, logger="seed_node.window"):
        window = worker.restore(path, offer["epoch"], GROUP, RULES, offer["snapshot"])
    assert [f["subject"] for f in window.drain()] == ['"good.rar" yEnc (1/3)']
    assert "dropped 2 file(s) of the snapshot" in caplog.text
    assert "outside the lane's articles 1..9999" in caplog.text
    assert worker.stats.snapshot()["snapshot_dropped"] == 2
    assert worker.stats.snapshot()["snapshot_resets"] == 0
