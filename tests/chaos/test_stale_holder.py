"""A holder whose range and lane were taken over while the coordinator restarted comes back.

Node A holds a range and a lane, has a batch and a snapshot acknowledged; the
coordinator (gunicorn and every worker) is SIGKILLed, A's leases run out, a
new coordinator starts on the same database, node B takes both over. A, not
knowing, then sends every call it has with its old epochs: each answers 409
`lease_lost`, and nothing it sent is stored: not a file, not a counter, not a
byte of snapshot. What A had acknowledged before the restart is all there.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.chaos import clients, harness
from tests.support.fleet import Fleet
from tests.support.inn2 import InnServer
from tests.support.snapshots import window_snapshot

pytestmark = [pytest.mark.e2e, pytest.mark.chaos]


def posted_file(name: str, article: int) -> dict[str, Any]:
    return {
        "subject": f'[1/1] - "{name}" yEnc (1/1)',
        "poster": "stale <s@example.invalid>",
        "date": 1700000000,
        "total": 1,
        "segments": [[1, article, f"<{name}@example.invalid>", 1000]],
    }


RANGE_ROW = "SELECT status, node_id, epoch, next_id, headers FROM seed_range WHERE id = %s"
LANE_ROW = (
    "SELECT node_id, epoch, snapshot_next, snapshot_size FROM group_lane "
    "WHERE group_id = %s AND lane = 'history'"
)
FILES = "SELECT subject FROM catalog_file ORDER BY subject"


class Node:
    def __init__(self, fleet: Fleet, name: str) -> None:
        self.fleet, self.token = fleet, clients.token(fleet, name)

    def call(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> Any:
        return clients.call(
            self.fleet.url,
            method,
            "/api/v1/" + path,
            who="node",
            token=self.token,
            body=body,
            raw=raw,
        )

    def ok(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> Any:
        answer = self.call(method, path, body, raw)
        assert 200 <= answer.status < 300, answer
        return answer.body


def take_over(fleet: Fleet, b: Node, range_id: int, group_id: int) -> tuple[int, int]:
    """B leases the range and the group's history lane; (range epoch, lane epoch)."""
    lease = b.ok("POST", "ranges/lease")["lease"]
    assert lease and lease["id"] == range_id, lease
    for _ in range(3):
        lane = b.ok("POST", "groups/lease", {"lane": "history"})["lease"]
        if lane and lane["group"]["id"] == group_id:
            return lease["epoch"], lane["epoch"]
    raise AssertionError("node B never got the lane back")


@pytest.fixture(scope="module")
def comeback(
    posted: InnServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("stale-holder")
    with harness.running_fleet(posted, workdir) as fleet:
        a, b = Node(fleet, "stale-a"), Node(fleet, "fresh-b")
        lease = a.ok("POST", "ranges/lease")["lease"]
        rid, e1, start = lease["id"], lease["epoch"], lease["start"]
        a.ok(
            "POST",
            f"ranges/{rid}/batch",
            {
                "epoch": e1,
                "next": start + 10,
                "headers": 10,
                "files": [posted_file("acked.bin", start)],
            },
        )
        lane = a.ok("POST", "groups/lease", {"lane": "history"})["lease"]
        gid, l1 = lane["group"]["id"], lane["epoch"]
        old = window_snapshot(lane["group"]["name"], counters={"headers": 3000})
        a.ok("PUT", f"groups/{gid}/lanes/history/snapshot?epoch={l1}&next={start}", raw=old)
        fleet.kill_server()  # every worker at once, as a host that dies
        fleet.execute(
            "UPDATE seed_range SET heartbeat_at = now() - interval '1 hour', priority = 1 WHERE id = %s",
            [rid],
        )
        fleet.execute(
            "UPDATE group_lane SET heartbeat_at = now() - interval '1 hour' WHERE group_id = %s",
            [gid],
        )
        fleet.start()  # a new coordinator on the same database
        e2, l2 = take_over(fleet, b, rid, gid)
        before = {
            "range": fleet.sql(RANGE_ROW, [rid]),
            "lane": fleet.sql(LANE_ROW, [gid]),
            "files": fleet.sql(FILES),
        }
        stale = stale_calls(a, rid, e1, end=lease["end"], gid=gid, l1=l1)
        yield {
            "stale": stale,
            "before": before,
            "after": {
                "range": fleet.sql(RANGE_ROW, [rid]),
                "lane": fleet.sql(LANE_ROW, [gid]),
                "files": fleet.sql(FILES),
            },
            "old": old,
            "file": (workdir / "snapshots" / f"group-{gid}-history.gz").read_bytes(),
            "parts": list((workdir / "snapshots").glob("*.part")),
            "epochs": (e1, e2, l1, l2),
            "b_batch": b.call(
                "POST", f"ranges/{rid}/batch", {"epoch": e2, "next": start + 20, "headers": 10}
            ),
            "b_get": b.call("GET", f"groups/{gid}/lanes/history/snapshot?epoch={l2}"),
        }


def stale_calls(a: Node, rid: int, e1: int, *, end: int, gid: int, l1: int) -> dict[str, Any]:
    lane = f"groups/{gid}/lanes/history"
    batch = {"epoch": e1, "next": end + 1, "headers": 500, "files": [posted_file("stale.bin", end)]}
    return {
        "batch": a.call("POST", f"ranges/{rid}/batch", batch),
        "heartbeat": a.call("POST", f"ranges/{rid}/heartbeat", {"epoch": e1}),
        "finish": a.call("POST", f"ranges/{rid}/finish", {"epoch": e1}),
        "release": a.call("POST", f"ranges/{rid}/release", {"epoch": e1, "error": "stale"}),
        "lane heartbeat": a.call("POST", f"{lane}/heartbeat", {"epoch": l1}),
        "lane next": a.call("POST", f"{lane}/next", {"epoch": l1}),
        "snapshot": a.call(
            "PUT", f"{lane}/snapshot?epoch={l1}&next={end + 1}", raw=os.urandom(3000)
        ),
        "snapshot get": a.call("GET", f"{lane}/snapshot?epoch={l1}"),
        "lane release": a.call("POST", f"{lane}/release", {"epoch": l1}),
    }


def test_the_range_and_lane_were_taken_over_with_new_epochs(comeback: dict[str, Any]) -> None:
    e1, e2, l1, l2 = comeback["epochs"]
    assert e2 > e1 and l2 > l1


def test_every_call_of_the_stale_holder_is_a_409(comeback: dict[str, Any]) -> None:
    for name, answer in comeback["stale"].items():
        assert (answer.status, answer.code) == (409, "lease_lost"), (name, answer)


def test_the_stale_holder_stored_nothing_and_lost_nothing_acknowledged(
    comeback: dict[str, Any],
) -> None:
    assert comeback["after"] == comeback["before"]
    subjects = [row[0] for row in comeback["after"]["files"]]
    assert any("acked.bin" in s for s in subjects)
    assert not any("stale.bin" in s for s in subjects)
    assert comeback["file"] == comeback["old"]
    assert comeback["parts"] == []


def test_the_new_holder_goes_on(comeback: dict[str, Any]) -> None:
    assert comeback["b_batch"].status == 200, comeback["b_batch"]
    assert comeback["b_get"].status == 200
    assert comeback["b_get"].digest == hashlib.sha256(comeback["old"]).hexdigest()
