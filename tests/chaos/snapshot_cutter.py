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

from tests.chaos.http_cutter import HEADERS_END, _closing, _pipe, _read_message
from tests.chaos.proxy import LoopbackProxy


@dataclass
class SnapshotCutPlan:
    cut: set[int]  # snapshot GET number (1-based) whose answer is cut halfway
    gets: int = 0
    cuts: list[str] = field(default_factory=list)  # "get#n at k of m bytes"


class SnapshotCutter(LoopbackProxy):
    scheme = "http"
    plan: SnapshotCutPlan

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_w: asyncio.StreamWriter | None = None
        try:
            head = _closing(await asyncio.wait_for(client_r.readuntil(HEADERS_END), timeout=30))
            line = head.split(b"\r\n", 1)[0]
            server_r, server_w = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), timeout=10
            )
            server_w.write(head)
            if not (line.startswith(b"GET ") and b"/snapshot?" in line):
                await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))
                return
            await server_w.drain()
            self.plan.gets += 1
            if self.plan.gets not in self.plan.cut:
                await _pipe(server_r, client_w)
                return
            answer = await asyncio.wait_for(_read_message(server_r), timeout=60)
            if answer is None:
                return
            answer_head, body = answer
            if not answer_head.startswith(b"HTTP/1.1 200"):  # only a snapshot's body is cut
                client_w.write(answer_head + body)
                await client_w.drain()
                return
            client_w.write(answer_head + body[: len(body) // 2])
            await client_w.drain()
            self.plan.cuts.append(f"get#{self.plan.gets} at {len(body) // 2} of {len(body)} bytes")
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            for writer in (client_w, server_w):
                if writer is not None:
                    writer.close()
