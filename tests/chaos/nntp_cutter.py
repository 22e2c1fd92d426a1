"""A TCP proxy between agents and INN2 that drops connections at chosen byte offsets.

It runs an asyncio loop in a thread on 127.0.0.1. The client's commands are
watched for OVER/XOVER; the server's answer to the n-th one (counted over all
connections) is cut, when the plan names n, after the planned number of bytes:
both sockets are closed there. The first connection is also cut once in the
middle of its greeting. What was cut is recorded in `cuts`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tests.chaos.proxy import LoopbackProxy

OVER_END = b"\r\n.\r\n"
GREETING_CUT = 7  # bytes of the greeting ("200 ...") sent before the first cut


@dataclass
class CutPlan:
    over_cuts: dict[int, int]  # OVER answer number (1-based) -> bytes sent before the cut
    cut_greeting: bool = True
    cuts: list[str] = field(default_factory=list)
    overs: int = 0
    connections: int = 0


class _Session:
    def __init__(self, plan: CutPlan, number: int) -> None:
        self.plan = plan
        self.number = number
        self.cut_at: int | None = None  # of the OVER answer being forwarded
        self.sent = 0
        self.in_over = False
        self.tail = b""


async def _pipe_commands(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, session: _Session
) -> None:
    while data := await reader.read(65536):
        for line in data.split(b"\n"):
            word = line.strip().split(b" ", 1)[0].upper()
            if word in (b"OVER", b"XOVER"):
                session.plan.overs += 1
                session.in_over, session.sent, session.tail = True, 0, b""
                session.cut_at = session.plan.over_cuts.get(session.plan.overs)
        writer.write(data)
        await writer.drain()


async def _pipe_answers(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, session: _Session
) -> None:
    plan = session.plan
    greeting = session.number == 1 and plan.cut_greeting
    while data := await reader.read(65536):
        if greeting:
            writer.write(data[:GREETING_CUT])
            await writer.drain()
            plan.cuts.append("greeting")
            return
        if session.in_over and session.cut_at is not None:
            if session.sent + len(data) >= session.cut_at:
                writer.write(data[: session.cut_at - session.sent])
                await writer.drain()
                plan.cuts.append(f"over#{plan.overs}@{session.cut_at}")
                return
        if session.in_over:
            session.sent += len(data)
            joined = session.tail + data
            if OVER_END in joined or joined.startswith((b"4", b"5")):
                session.in_over, session.cut_at = False, None
            session.tail = joined[-4:]
        writer.write(data)
        await writer.drain()


class NntpCutter(LoopbackProxy):
    scheme = "nntp"
    plan: CutPlan

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.plan.connections += 1
        session = _Session(self.plan, self.plan.connections)
        try:
            server_r, server_w = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), timeout=10
            )
        except OSError:
            client_w.close()
            return
        tasks = [
            asyncio.ensure_future(_pipe_commands(client_r, server_w, session)),
            asyncio.ensure_future(_pipe_answers(server_r, client_w, session)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
            for w in (client_w, server_w):
                w.close()
