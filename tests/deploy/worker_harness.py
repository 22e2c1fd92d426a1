"""The buffering worker (core/gunicorn_worker.py) run in this process, on a thread.

Its main loop, thread pool and deadlines are gunicorn's and the worker's own;
only the process around it is missing (no arbiter, no fork, no signals). The
application is a small WSGI callable a test writes, so each test controls
what a request does, and socket buffers can be set on both sides (a listener's
SO_SNDBUF is inherited by the connections it accepts), which makes a client
that does not read its answer block the worker's send on any machine.
"""

from __future__ import annotations

import os
import selectors
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

from gunicorn.config import Config

from core.gunicorn_worker import BufferingWorker


class RecordingLog:
    """gunicorn's logger, keeping each line (access lines aside) for the test to read."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def _record(self, level: str, message: str, *args: Any, **_kwargs: Any) -> None:
        self.lines.append((level, message % args if args else message))

    def __getattr__(self, level: str) -> Callable[..., None]:
        return lambda message, *args, **kwargs: self._record(level, str(message), *args)

    def access(self, *_args: Any) -> None:
        pass

    def text(self) -> str:
        return "\n".join(f"{level}: {line}" for level, line in self.lines)


def listener(sndbuf: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if sndbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@contextmanager
def running_worker(
    app: Callable[..., Any], *, threads: int = 2, connections: int = 1000, sock: Any = None
) -> Iterator[SimpleNamespace]:
    """A BufferingWorker serving `app` on a listener of 127.0.0.1 (or `sock`);
    yields its port, the worker and its log."""
    cfg = Config()
    for name, value in (
        ("threads", threads),
        ("worker_connections", connections),
        ("keepalive", 2),
        ("graceful_timeout", 1),
    ):
        cfg.set(name, value)
    sock = sock if sock is not None else listener()
    log = RecordingLog()
    worker = BufferingWorker(
        1, os.getppid(), [sock], SimpleNamespace(wsgi=lambda: app), 30, cfg, log
    )
    worker.tpool = worker.get_thread_pool()
    worker.poller = selectors.DefaultSelector()
    worker.method_queue.init()
    worker.load_wsgi()
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        yield SimpleNamespace(port=sock.getsockname()[1], worker=worker, log=log, thread=thread)
    finally:
        worker.alive = False
        worker.method_queue.defer(lambda: None)
        thread.join(10)


def wait_until(condition: Callable[[], bool], seconds: float = 15.0) -> bool:
    """Whether `condition` holds within `seconds` (checked every 50 ms)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def connect(port: int, rcvbuf: int | None = None, timeout: float = 15.0) -> socket.socket:
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    client.settimeout(timeout)
    client.connect(("127.0.0.1", port))
    return client


def answer_head(client: socket.socket) -> bytes:
    """The answer's status line and headers (b"" when the connection closed first),
    read a byte at a time so that what follows stays on the socket."""
    data = b""
    while not data.endswith(b"\r\n\r\n"):
        byte = client.recv(1)
        if not byte:
            return data
        data += byte
    return data[:-4]


def whole_answer(client: socket.socket) -> bytes:
    """Everything until the server closes the connection."""
    data = b""
    while chunk := client.recv(65536):
        data += chunk
    return data


def hello(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """An application that answers every request with a few bytes."""
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "6")])
    return [b"hello\n"]
