"""A TCP proxy on the loopback, run on an event loop of its own thread.

Subclasses (http_cutter, nntp_cutter) implement `_handle` for each client
connection and name their URL scheme; `running()` starts and stops it all.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, Self

from tests.support.net import LOOPBACK


class LoopbackProxy:
    scheme: ClassVar[str]

    def __init__(self, upstream: tuple[str, int], plan: Any) -> None:
        self.upstream = upstream
        self.plan = plan
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    async def _handle(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _serve(self) -> asyncio.base_events.Server:
        return await asyncio.start_server(self._handle, LOOPBACK, 0)

    @property
    def url(self) -> str:
        return f"{self.scheme}://{LOOPBACK}:{self.port}"

    @contextmanager
    def running(self) -> Iterator[Self]:
        self.thread.start()
        server = asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        self.port = server.sockets[0].getsockname()[1]
        try:
            yield self
        finally:

            async def shut() -> None:
                server.close()
                for task in asyncio.all_tasks():
                    if task is not asyncio.current_task():
                        task.cancel()

            asyncio.run_coroutine_threadsafe(shut(), self.loop).result(10)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
