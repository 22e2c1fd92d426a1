"""A proxy between agents and the coordinator that cuts snapshot downloads halfway.

The n-th `GET .../snapshot` (counted over all connections) named in the plan
is forwarded whole, but only the answer's head and half its body reach the
agent before the proxy closes both sides: the download breaks off the way a
dropped connection would. Every other call passes untouched, one per
connection (http_cutter.py asks the server to close after each answer).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tests.chaos.http_cutter import Ends, HttpProxy, _pipe, _read_message


@dataclass
class SnapshotCutPlan:
    cut: set[int]  # snapshot GET number (1-based) whose answer is cut halfway
    gets: int = 0
    cuts: list[str] = field(default_factory=list)  # "get#n at k of m bytes"


class SnapshotCutter(HttpProxy):
    plan: SnapshotCutPlan

    async def intercept(self, head: bytes, line: bytes, ends: Ends) -> bool:
        if not (line.startswith(b"GET ") and b"/snapshot?" in line):
            return False
        ends.server_w.write(head)
        await ends.server_w.drain()
        self.plan.gets += 1
        if self.plan.gets not in self.plan.cut:
            await _pipe(ends.server_r, ends.client_w)
            return True
        answer = await asyncio.wait_for(_read_message(ends.server_r), timeout=60)
        if answer is None:
            return True
        answer_head, body = answer
        if not answer_head.startswith(b"HTTP/1.1 200"):  # only a snapshot's body is cut
            ends.client_w.write(answer_head + body)
            await ends.client_w.drain()
            return True
        ends.client_w.write(answer_head + body[: len(body) // 2])
        await ends.client_w.drain()
        self.plan.cuts.append(f"get#{self.plan.gets} at {len(body) // 2} of {len(body)} bytes")
        return True
