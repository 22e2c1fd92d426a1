"""gunicorn's gthread worker, reading small requests whole before a thread takes them.

A gthread worker hands a connection to a thread as soon as its first bytes
arrive, and the thread then blocks reading the head and the body: fifty
clients sending a byte a second hold fifty threads, and a lease call from
another node waits behind them. This worker reads, in its main loop and
without blocking, each request's head and a body of up to BUFFER_BYTES first
(what nginx's request buffering does); only a whole request (or the head of a
larger body: a snapshot upload streams, holding its thread) reaches a thread.
A connection that has not sent that much within READ_SECONDS is closed. Its
base times each request's wait for a thread (indexer/gunicorn_worker.py), so
an API call queued too long is told to come back (503).
docs/deploy.md ("Workers") and docs/reliability.md (fault 7).
"""

from __future__ import annotations

import errno
import re
import selectors
import socket
import time
from functools import partial
from typing import Any

from gunicorn.workers.gthread import TConn

from indexer.gunicorn_worker import QueueTimedWorker
from usenet.numbers import ascii_digits

BUFFER_BYTES = 1 << 20  # bodies up to this are read whole before a thread is taken
HEAD_BYTES = 64 * 1024  # a head not ended by then goes to a thread (which refuses it)
READ_SECONDS = 120.0  # to send a head and such a body
_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
_CHUNKED = re.compile(rb"\r\ntransfer-encoding:[^\r\n]*chunked", re.IGNORECASE)
_CONTINUE = re.compile(rb"\r\nexpect:[ \t]*100-continue", re.IGNORECASE)


class BufferedConn(TConn):  # type: ignore[misc]
    """A connection with the bytes read before a thread took it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.early = bytearray()
        self.deadline = time.monotonic() + READ_SECONDS

    def init(self) -> None:
        fresh = not self.initialized
        super().init()
        if fresh and self.early:
            self.parser.unreader.unread(bytes(self.early))
            self.early.clear()


def request_ready(data: bytes | bytearray) -> bool:
    """Whether the bytes hold a whole head and, if small, its whole body."""
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return len(data) >= HEAD_BYTES
    head = bytes(data[:end])
    if _CHUNKED.search(head) or _CONTINUE.search(head):
        return True  # the thread reads it (a client expecting 100 waits for it)
    length = _LENGTH.search(head)
    digits = length.group(1) if length else b"0"
    # More digits than any length: past the buffer, so a thread reads it (and refuses it).
    wanted = int(digits) if ascii_digits(digits) else BUFFER_BYTES + 1
    return wanted > BUFFER_BYTES or len(data) - end - 4 >= wanted


class BufferingWorker(QueueTimedWorker):
    """`--worker-class coordinator.gunicorn_worker.BufferingWorker` (manage.py serve)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reading: dict[int, BufferedConn] = {}

    def accept(self, listener: socket.socket) -> None:
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        conn = BufferedConn(self.cfg, client_sock, client_addr, listener.getsockname())
        if self.cfg.is_ssl:  # encrypted bytes cannot be read ahead here
            client_sock.setblocking(True)
            self.enqueue_req(conn)
            return
        self.read_ahead(conn)

    def on_client_socket_readable(self, conn: BufferedConn, client: socket.socket) -> None:
        """A kept-alive connection's next request: read it ahead too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if self.cfg.is_ssl:
            self.enqueue_req(conn)
            return
        conn.deadline = time.monotonic() + READ_SECONDS
        conn.sock.setblocking(False)
        self.reading[conn.sock.fileno()] = conn
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_readable, conn))

    def read_ahead(self, conn: BufferedConn) -> None:
        conn.sock.setblocking(False)
        self.reading[conn.sock.fileno()] = conn
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_readable, conn))

    def on_readable(self, conn: BufferedConn, client: socket.socket) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client went away before sending a request
            self.drop(conn)
            return
        conn.early += data
        if not request_ready(conn.early):
            return
        self.poller.unregister(client)
        del self.reading[client.fileno()]
        conn.data_ready = True
        if conn.initialized:  # a kept-alive connection: its parser exists already
            conn.parser.unreader.unread(bytes(conn.early))
            conn.early.clear()
        self.enqueue_req(conn)

    def drop(self, conn: BufferedConn) -> None:
        self.reading.pop(conn.sock.fileno(), None)
        try:
            self.poller.unregister(conn.sock)
        except (OSError, KeyError, ValueError):
            pass
        self.nr_conns -= 1
        conn.close()

    def murder_pending(self) -> None:
        """Also close connections that took too long to send a request (all, when stopping)."""
        super().murder_pending()
        now = time.monotonic()
        for conn in list(self.reading.values()):
            if not self.alive or conn.deadline <= now:
                self.drop(conn)
