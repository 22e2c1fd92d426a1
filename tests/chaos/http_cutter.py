"""A TCP proxy between agents and the coordinator that cuts batch calls halfway.

The proxy makes each call a connection of its own (the agent's kept connection
is closed after one answer; it calls again on a new one). It reads each request whole; for
the n-th `POST .../batch` (counted over all connections) the plan may say:
`"request"` - forward the headers and part of the body, then close both sides
(the coordinator never sees a whole request); `"answer"` - forward the request,
then only part of the answer's body before closing (the batch is stored, the
agent does not learn it). What was cut is recorded in `cuts`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from tests.chaos.proxy import LoopbackProxy

HEADERS_END = b"\r\n\r\n"


@dataclass
class HttpCutPlan:
    cuts_at: dict[int, str]  # batch call number (1-based) -> "request" or "answer"
    batches: int = 0
    cuts: list[str] = field(default_factory=list)


def _content_length(head: bytes) -> int:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value.strip())
    return 0


def _closing(head: bytes) -> bytes:
    """The request head asking the server to close after its answer: one call per
    connection, so every call's first line passes the proxy (gthread workers keep
    connections alive otherwise, and later calls would go by unseen)."""
    lines = [
        line
        for line in head[: -len(HEADERS_END)].split(b"\r\n")
        if not line.lower().startswith(b"connection:")
    ]
    return b"\r\n".join([*lines, b"Connection: close"]) + HEADERS_END


async def _read_message(reader: asyncio.StreamReader) -> tuple[bytes, bytes] | None:
    """(head with its blank line, body) of one HTTP message with a Content-Length."""
    try:
        head = await reader.readuntil(HEADERS_END)
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    body = await reader.readexactly(_content_length(head))
    return head, body


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await asyncio.wait_for(reader.read(65536), timeout=120):
        writer.write(data)
        await writer.drain()


class HttpProxy(LoopbackProxy):
    """One call per connection to the coordinator, passed through untouched
    unless `intercept` takes it over (a cutter's faults)."""

    scheme = "http"

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_w: asyncio.StreamWriter | None = None
        try:
            head = _closing(await asyncio.wait_for(client_r.readuntil(HEADERS_END), timeout=30))
            server_r, server_w = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), timeout=10
            )
            ends = Ends(client_r, client_w, server_r, server_w)
            if not await self.intercept(head, head.split(b"\r\n", 1)[0], ends):
                server_w.write(head)
                # The request's body goes up while the answer comes back; once the
                # server closes, the client's connection is closed too (the agent
                # keeps connections open, and its next call must reach this proxy).
                request = asyncio.ensure_future(_pipe(client_r, server_w))
                try:
                    await _pipe(server_r, client_w)
                finally:
                    request.cancel()
                    await asyncio.gather(request, return_exceptions=True)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            for writer in (client_w, server_w):
                if writer is not None:
                    writer.close()

    async def intercept(self, head: bytes, line: bytes, ends: Ends) -> bool:
        """Handle the call whose request head is `head` (its first line `line`);
        False: nothing was sent yet, pass it through."""
        return False


@dataclass
class Ends:
    client_r: asyncio.StreamReader
    client_w: asyncio.StreamWriter
    server_r: asyncio.StreamReader
    server_w: asyncio.StreamWriter


class HttpCutter(HttpProxy):
    plan: HttpCutPlan

    async def intercept(self, head: bytes, line: bytes, ends: Ends) -> bool:
        if not (line.startswith(b"POST ") and b"/batch " in line):
            return False
        body = await ends.client_r.readexactly(_content_length(head))
        self.plan.batches += 1
        cut = self.plan.cuts_at.get(self.plan.batches)
        if cut == "request":
            ends.server_w.write(head + body[: len(body) // 2])
            await ends.server_w.drain()
            self.plan.cuts.append(f"request#{self.plan.batches}")
            return True
        ends.server_w.write(head + body)
        await ends.server_w.drain()
        if cut == "answer":
            answer = await asyncio.wait_for(_read_message(ends.server_r), timeout=60)
            if answer is not None:
                ends.client_w.write(answer[0] + answer[1][: len(answer[1]) // 2])
                await ends.client_w.drain()
                self.plan.cuts.append(f"answer#{self.plan.batches}")
            return True
        await _pipe(ends.server_r, ends.client_w)
        return True
