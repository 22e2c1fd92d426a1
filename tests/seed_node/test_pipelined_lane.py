"""Window mode against a real coordinator: the lane moves on while a range's last batch is answered.

A loopback proxy between the agent and the coordinator (live_server, real
PostgreSQL) records the calls in the order they pass and holds the answer of
the first range's last batch until the lane's next `next` has gone by. The
coordinator hands out the second range on that `next` (it names the range
read), then both ranges are finished and counted on the lane, and the lane
is given back.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from leases.models import GroupLane
from seed_node.cli import main
from seed_node.control import Control
from seeding.models import RangeStatus, SeedRange
from tests.chaos.http_cutter import Ends, HttpProxy, _content_length, _read_message
from tests.support.factories import GroupFactory, NodeFactory, SeedRangeFactory
from tests.support.nntpd import NNTPServer
from tests.support.scripted import binary_articles

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GROUP = "alt.binaries.x"
HELD_SECONDS = 10.0  # the longest the first range's batch answer waits for the lane's next
CALL = re.compile(rb"^POST /api/v1(\S*)")


class HoldingProxy(HttpProxy):
    """Passes calls through, records them in order; the batch of range ``plan`` waits
    for a later `next` before its answer goes back to the agent."""

    def __init__(self, upstream: tuple[str, int], held_range: int) -> None:
        super().__init__(upstream, held_range)
        self.calls: list[str] = []
        self.lock = threading.Lock()
        self.nexts = 0
        self.next_after_batch = threading.Event()

    def record(self, call: str) -> None:
        with self.lock:
            self.calls.append(call)

    async def intercept(self, head: bytes, line: bytes, ends: Ends) -> bool:
        match = CALL.match(line)
        path = match.group(1).decode() if match else line.decode()
        if path.endswith("/next"):
            self.nexts += 1
            self.record("next")
            if self.nexts == 2:
                self.next_after_batch.set()
            return False
        if path != f"/ranges/{self.plan}/batch":
            if path.endswith(("/batch", "/finish", "/release")):
                self.record(path)
            return False
        body = await ends.client_r.readexactly(_content_length(head))
        ends.server_w.write(head + body)
        await ends.server_w.drain()
        answer = await asyncio.wait_for(_read_message(ends.server_r), timeout=60)
        assert answer is not None
        await asyncio.get_running_loop().run_in_executor(
            None, self.next_after_batch.wait, HELD_SECONDS
        )
        self.record(f"{path} answered")
        ends.client_w.write(answer[0] + answer[1])
        await ends.client_w.drain()
        return True


def test_the_lane_hands_out_the_next_range_while_the_last_batch_is_answered(
    live_server: Any, settings: Any, tmp_path: Path
) -> None:
    settings.SNAPSHOT_DIR = tmp_path / "snapshots"
    group = GroupFactory(name=GROUP)
    first = SeedRangeFactory(group=group, start_id=1, end_id=200)
    second = SeedRangeFactory(group=group, start_id=201, end_id=400)
    node = NodeFactory()
    token = tmp_path / "token"
    token.write_text(node.token + "\n")
    host, port = live_server.url.removeprefix("http://").split(":")
    with NNTPServer() as news, HoldingProxy((host, int(port)), first.id).running() as proxy:
        news.add_group(GROUP, binary_articles())
        status = main(
            [
                *("--coordinator", proxy.url, "--token-file", str(token)),
                *("--mode", "window", "--news-server", f"nntp://{news.host}:{news.port}"),
                *("--batch-headers", "100000", "--exit-when-idle", "--max-backoff", "1"),
            ],
            control=Control(),
        )
    assert status == 0
    calls = proxy.calls
    # The lane's second `next` passed while the first range's batch was unanswered:
    # that batch is recorded only when its answer goes back.
    assert calls[:2] == ["next", "next"], calls
    answered = calls.index(f"/ranges/{first.id}/batch answered")
    assert calls.index(f"/ranges/{first.id}/finish") > answered
    for rng in (first, second):
        rng.refresh_from_db()
        assert (rng.status, rng.next_id) == (RangeStatus.DONE, rng.end_id + 1)
    headers = sum(SeedRange.objects.filter(group=group).values_list("headers", flat=True))
    lane = GroupLane.objects.get(group=group, lane="history")
    assert (lane.ranges_done, lane.headers, lane.node_id) == (2, headers, None)
    assert headers == 395  # every article of the two ranges, once
