"""Loopback networking for tests that start servers of their own."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOOPBACK = "127.0.0.1"


def free_port() -> int:
    """An unused loopback port (the kernel's pick; freed again before the server binds)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


@contextmanager
def http_server(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """`handler` served on a loopback port by a thread of its own: its base URL,
    and the server stopped (and its thread joined) afterwards."""
    server = ThreadingHTTPServer((LOOPBACK, 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://{LOOPBACK}:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
