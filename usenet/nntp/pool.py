"""A thread-safe pool of NNTP connections to one news server.

Providers cap connections per account, so the pool never opens more than
the configured number; a caller that finds them all in use waits, then
gets a clear error. A `gate` caps connections across processes and hosts
too: each open connection holds one of its slots, and with a gate a
connection is closed when it comes back (an idle one would keep a slot
another host may be waiting for). A connection whose use failed at the socket or
protocol level is closed and forgotten, never handed to the next caller.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Protocol

from usenet.nntp.client import NNTPClient
from usenet.nntp.config import NewsServerConfig
from usenet.nntp.errors import NNTPConnectionError, NNTPProtocolError, PoolExhausted

log = logging.getLogger(__name__)


class ConnectionGate(Protocol):
    """Slots shared beyond this process; one is held per open connection."""

    def acquire(self, timeout: float) -> int:
        """A free slot, waiting up to `timeout` seconds; raises PoolExhausted after."""
        ...

    def release(self, slot: int) -> None: ...


class NNTPPool:
    def __init__(
        self,
        config: NewsServerConfig,
        *,
        acquire_timeout: float = 60.0,
        client_factory: Callable[[], NNTPClient] | None = None,
        gate: ConnectionGate | None = None,
    ) -> None:
        self.config = config
        self.max_connections = config.connections
        self.acquire_timeout = acquire_timeout
        # One memory of failed compressions for all connections to this server.
        self.disabled_compressions: set[str] = set()
        self._client_factory = client_factory or self._new_client
        self._condition = threading.Condition()
        self._idle: list[NNTPClient] = []
        self._open = 0
        self._closed = False
        self._gate = gate
        self._slots: dict[int, int] = {}  # id(client) -> the gate's slot it holds

    def __repr__(self) -> str:
        return f"<NNTPPool {self.config} open={self._open}/{self.max_connections}>"

    @property
    def open_connections(self) -> int:
        with self._condition:
            return self._open

    @property
    def idle_connections(self) -> int:
        with self._condition:
            return len(self._idle)

    def _new_client(self) -> NNTPClient:
        return NNTPClient.from_config(self.config, disabled_compressions=self.disabled_compressions)

    @contextmanager
    def connection(self, timeout: float | None = None) -> Iterator[NNTPClient]:
        """Lend a connected client; it goes back to the pool unless it broke."""
        client = self._acquire(self.acquire_timeout if timeout is None else timeout)
        try:
            yield client
        except (NNTPConnectionError, NNTPProtocolError):
            self._discard(client)
            raise
        except BaseException:
            # Other errors (a missing group, a caller's bug) leave a usable
            # connection only if no response was left half read.
            self._release(client)
            raise
        else:
            self._release(client)

    def _acquire(self, timeout: float) -> NNTPClient:
        deadline = time.monotonic() + timeout
        with self._condition:
            while True:
                if self._closed:
                    raise PoolExhausted(f"pool for {self.config} is closed")
                if self._idle:
                    return self._idle.pop()
                if self._open < self.max_connections:
                    self._open += 1
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PoolExhausted(
                        f"all {self.max_connections} connections to {self.config} "
                        f"stayed in use for {timeout:g} seconds"
                    )
                self._condition.wait(remaining)
        slot: int | None = None
        try:
            if self._gate is not None:
                slot = self._gate.acquire(max(0.0, deadline - time.monotonic()))
            client = self._client_factory().connect()
        except BaseException:
            if slot is not None:
                self._gate.release(slot)  # type: ignore[union-attr]
            with self._condition:
                self._open -= 1
                self._condition.notify()
            raise
        if slot is not None:
            with self._condition:
                self._slots[id(client)] = slot
        return client

    def _free_slot(self, client: NNTPClient) -> None:
        with self._condition:
            slot = self._slots.pop(id(client), None)
        if slot is not None and self._gate is not None:
            self._gate.release(slot)

    def _release(self, client: NNTPClient) -> None:
        if not client.connected:
            self._discard(client)
            return
        with self._condition:
            closing = self._closed or self._gate is not None
            if closing:
                self._open -= 1
            else:
                self._idle.append(client)
            self._condition.notify()
        if closing:
            client.quit()
            self._free_slot(client)

    def _discard(self, client: NNTPClient) -> None:
        log.info("dropping a broken connection to %s", self.config)
        client.close()
        self._free_slot(client)
        with self._condition:
            self._open -= 1
            self._condition.notify()

    def close(self) -> None:
        """Close idle connections now; lent ones are closed when they come back."""
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            self._open -= len(idle)
            self._condition.notify_all()
        for client in idle:
            client.quit()

    def __enter__(self) -> NNTPPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
