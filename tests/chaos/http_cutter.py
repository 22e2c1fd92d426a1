"""A TCP proxy between agents and the coordinator that cuts batch calls halfway.

The agent opens a connection per call. The proxy reads each request whole; for
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


class HttpCutter(LoopbackProxy):
    scheme = "http"
    plan: HttpCutPlan

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_w: asyncio.StreamWriter | None = None
        try:
            head = _closing(await asyncio.wait_for(client_r.readuntil(HEADERS_END), timeout=30))
            line = head.split(b"\r\n", 1)[0]
            server_r, server_w = await asyncio.wait_for(
                asyncio.open_connection(*self.upstream), timeout=10
            )
            if not (line.startswith(b"POST ") and b"/batch " in line):
                server_w.write(head)
                await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))
                return
            body = await client_r.readexactly(_content_length(head))
            self.plan.batches += 1
            cut = self.plan.cuts_at.get(self.plan.batches)
            if cut == "request":
                server_w.write(head + body[: len(body) // 2])
                await server_w.drain()
                self.plan.cuts.append(f"request#{self.plan.batches}")
                return
            server_w.write(head + body)
            await server_w.drain()
            if cut == "answer":
                answer = await asyncio.wait_for(_read_message(server_r), timeout=60)
                if answer is not None:
                    client_w.write(answer[0] + answer[1][: len(answer[1]) // 2])
                    await client_w.drain()
                    self.plan.cuts.append(f"answer#{self.plan.batches}")
                return
            await _pipe(server_r, client_w)
        except (TimeoutError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            return
        finally:
            for writer in (client_w, server_w):
                if writer is not None:
                    writer.close()
