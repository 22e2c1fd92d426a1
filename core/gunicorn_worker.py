"""gunicorn's gthread worker, reading requests in its main loop so that no client holds a thread.

A gthread worker hands a connection to a thread as soon as its first bytes
arrive, and the thread then blocks reading the head and the body: fifty
clients sending a byte a second hold fifty threads, and a lease call from
another node waits behind them. This worker reads, in its main loop and
without blocking, each request's head and then:

- refuses at once, without a thread and without reading a byte of the body,
  a request whose body its route or its caller may not send
  (core/api/bodies.py: none on a GET, a few KiB without credentials);
- reads a body of up to BUFFER_BYTES whole before a thread takes the request
  (what nginx's request buffering does);
- hands a larger or chunked body (a snapshot upload streams) to a thread at
  once; the application checks the token or session before reading it, and
  the thread's reads have a deadline (`DeadlineSocket`).

Every request must arrive within WEB_READ_SECONDS plus its length at
WEB_BODY_MIN_BYTES_PER_SECOND; a thread gives up on a body after
WEB_BODY_IDLE_SECONDS without a byte. A body left unread closes the
connection rather than being drained in a thread, and connections are
closed gracefully from the main loop (gunicorn's own graceful close waits up
to 2 s there, blocking every other connection). Its base, QueueTimedWorker,
times each request's wait for a thread (core/queue_wait.py), so an API call
queued too long is told to come back (503).
docs/deploy.md ("Workers"), docs/security.md ("Request bodies").
"""

from __future__ import annotations

import errno
import math
import selectors
import socket
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from django.conf import settings
from django.http import HttpResponse
from gunicorn import util
from gunicorn.http.body import ChunkedReader, LengthReader
from gunicorn.workers.gthread import TConn, ThreadWorker

from core import queue_wait
from core.api import bodies

BUFFER_BYTES = 1 << 20  # bodies up to this are read whole before a thread is taken
HEAD_BYTES = 64 * 1024  # a head not ended by then goes to a thread (which refuses it)
LINGER_SECONDS = 2.0  # a closing connection's unread bytes are discarded this long at most
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def read_deadline(started: float, length: int) -> float:
    """When a request that began at `started` with a body of `length` must have arrived."""
    rate = int(settings.WEB_BODY_MIN_BYTES_PER_SECOND)
    return started + float(settings.WEB_READ_SECONDS) + length / rate


def body_arrived(head: bodies.Head, buffered: int) -> bool:
    """Whether a thread may take the request: its body is all here, or it streams."""
    length = head.length or 0
    return head.chunked or length > BUFFER_BYTES or buffered >= length


def without_expect(head: bytes) -> bytes:
    """The head without its Expect line (the main loop has answered 100 Continue)."""
    lines = head.split(b"\r\n")
    return b"\r\n".join(line for line in lines if not line.lower().startswith(b"expect:"))


def response_bytes(response: HttpResponse) -> bytes:
    """A small Django response as HTTP/1.1 bytes, closing the connection."""
    lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
    lines += [f"{name}: {value}" for name, value in response.items()]
    lines += [f"Content-Length: {len(response.content)}", "Connection: close", "", ""]
    return "\r\n".join(lines).encode("latin-1") + response.content


def body_left_on_socket(parser: Any) -> bool:
    """Whether the request's body has bytes the application did not read and the
    parser does not hold (draining them would wait on the client)."""
    body = getattr(getattr(parser, "mesg", None), "body", None)
    reader = getattr(body, "reader", None)
    if isinstance(reader, LengthReader):
        return reader.length > len(parser.unreader.buf.getvalue())
    if isinstance(reader, ChunkedReader):
        return reader.parser is not None
    return False


class DeadlineSocket:
    """The socket as a thread's request parser reads it: each read waits at most
    `idle` seconds for a byte, and none goes past `deadline` (time.monotonic()).
    The socket is blocking again after each read, for the answer's writes."""

    def __init__(self, sock: socket.socket, idle: float, deadline: float) -> None:
        self.sock = sock
        self.idle = idle
        self.deadline = deadline
        self.timeout: float | None = None  # set by gunicorn's drain (finish_body)

    def recv(self, size: int) -> bytes:
        left = self.deadline - time.monotonic()
        wait = min(self.idle, left, math.inf if self.timeout is None else self.timeout)
        if left <= 0:
            raise TimeoutError("the request did not arrive within its deadline")
        self.sock.settimeout(wait)
        try:
            return self.sock.recv(size)
        except TimeoutError:
            if wait < self.idle:
                raise TimeoutError("the request did not arrive within its deadline") from None
            raise TimeoutError(f"no byte arrived for {self.idle:g} s") from None
        finally:
            self.sock.settimeout(None)

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout

    def gettimeout(self) -> float | None:
        return self.timeout


class QueueTimedWorker(ThreadWorker):
    """gthread, timing each request's wait for a thread (core/queue_wait.py)."""

    def enqueue_req(self, conn: Any) -> None:
        conn.queued_at = time.monotonic()
        super().enqueue_req(conn)

    def handle(self, conn: Any) -> Any:
        queued_at = getattr(conn, "queued_at", None)
        queue_wait.record(None if queued_at is None else time.monotonic() - queued_at)
        try:
            return super().handle(conn)
        finally:
            queue_wait.record(None)


class BufferedConn(TConn):  # type: ignore[misc]
    """A connection with the bytes read before a thread took it."""

    def __init__(self, *args: Any, linger: Callable[[BufferedConn], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.early = bytearray()
        self.linger = linger
        self.reader: DeadlineSocket | None = None
        self.begin(time.monotonic())

    def begin(self, now: float) -> None:
        """A new request starts arriving: its head is unknown, its deadline the head's."""
        self.started = now
        self.deadline = read_deadline(now, 0)
        self.head: bodies.Head | None = None
        self.body_start = 0

    def init(self) -> None:
        fresh = not self.initialized
        super().init()
        if fresh and not self.cfg.is_ssl:
            idle = float(settings.WEB_BODY_IDLE_SECONDS)
            self.reader = DeadlineSocket(self.sock, idle, self.deadline)
            self.parser.unreader.sock = self.reader
        if fresh and self.early:
            self.parser.unreader.unread(bytes(self.early))
            self.early.clear()

    def close(self, graceful: bool = False) -> None:
        if graceful and not self.cfg.is_ssl:
            self.linger(self)  # without blocking the main loop
            return
        super().close(graceful)


class BufferingWorker(QueueTimedWorker):
    """`--worker-class core.gunicorn_worker.BufferingWorker` (manage.py serve)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reading: dict[int, BufferedConn] = {}
        self.lingering: dict[int, tuple[socket.socket, float]] = {}

    def accept(self, listener: socket.socket) -> None:
        try:
            client_sock, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        server = listener.getsockname()
        conn = BufferedConn(self.cfg, client_sock, client_addr, server, linger=self.linger)
        if self.cfg.is_ssl:  # encrypted bytes cannot be read ahead here
            client_sock.setblocking(True)
            super().enqueue_req(conn)
            return
        self.read_ahead(conn)

    def on_client_socket_readable(self, conn: BufferedConn, client: socket.socket) -> None:
        """A kept-alive connection's next request: read it ahead too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if self.cfg.is_ssl:
            super().enqueue_req(conn)
            return
        self.read_ahead(conn)

    def enqueue_req(self, conn: BufferedConn) -> None:
        """gthread's call for a kept-alive connection whose next request is buffered
        already (pipelined): read it ahead like any other."""
        if self.cfg.is_ssl or not conn.initialized:
            super().enqueue_req(conn)
            return
        conn.early += conn.parser.unreader.take_buffered()
        self.read_ahead(conn)

    def handle(self, conn: BufferedConn) -> Any:
        if conn.reader is not None:
            conn.reader.deadline = conn.deadline
        return super().handle(conn)

    def read_ahead(self, conn: BufferedConn) -> None:
        conn.begin(time.monotonic())
        conn.sock.setblocking(False)
        self.reading[conn.sock.fileno()] = conn
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self.on_readable, conn))
        if conn.early:
            self.advance(conn)

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
        self.advance(conn)

    def advance(self, conn: BufferedConn) -> None:
        """Read the head, then refuse the request, wait for its body, or hand it over."""
        if conn.head is None:
            end = conn.early.find(b"\r\n\r\n")
            if end < 0:
                if len(conn.early) >= HEAD_BYTES:
                    self.hand_over(conn)  # an endless head: the thread's parser refuses it
                return
            head = bodies.head_from_bytes(bytes(conn.early[:end]))
            if head is None:
                self.hand_over(conn)  # not a request head: the parser refuses it
                return
            refused = bodies.refusal(head)
            if refused is not None:
                self.refuse(conn, head, refused)
                return
            if not self.take_head(conn, head, end):
                return
        assert conn.head is not None
        if body_arrived(conn.head, len(conn.early) - conn.body_start):
            self.hand_over(conn)

    def take_head(self, conn: BufferedConn, head: bodies.Head, end: int) -> bool:
        """Note the head and the request's deadline; answer 100 Continue to a body read here."""
        conn.head, conn.body_start = head, end + 4
        length = head.length if head.length is not None else bodies.allowance(head)
        conn.deadline = read_deadline(conn.started, length)
        if head.expects_continue and not body_arrived(head, len(conn.early) - end - 4):
            shorter = without_expect(bytes(conn.early[:end]))
            conn.early[:end] = shorter
            conn.body_start = len(shorter) + 4
            try:
                conn.sock.send(CONTINUE)
            except OSError:
                self.drop(conn)
                return False
        return True

    def hand_over(self, conn: BufferedConn) -> None:
        self.stop_reading(conn)
        conn.data_ready = True
        if conn.initialized:  # a kept-alive connection: its parser exists already
            conn.parser.unreader.unread(bytes(conn.early))
            conn.early.clear()
        super().enqueue_req(conn)

    def refuse(self, conn: BufferedConn, head: bodies.Head, refused: bodies.Refusal) -> None:
        """Answer from the main loop, without reading the body, and close."""
        self.stop_reading(conn)
        self.log.info("refused %s %s unread: %d", head.method, head.path, refused.status)
        try:
            conn.sock.send(response_bytes(bodies.refusal_response(head, refused)))
        except OSError:
            pass
        self.nr_conns -= 1
        self.linger(conn)

    def stop_reading(self, conn: BufferedConn) -> None:
        self.reading.pop(conn.sock.fileno(), None)
        try:
            self.poller.unregister(conn.sock)
        except (OSError, KeyError, ValueError):
            pass

    def drop(self, conn: BufferedConn) -> None:
        self.stop_reading(conn)
        self.nr_conns -= 1
        util.close(conn.sock)

    def linger(self, conn: BufferedConn) -> None:
        """Close after the answer: send FIN, then discard what the client still sends
        until it closes too (so the answer is not cut by a reset), in the main loop."""
        sock = conn.sock
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            self.poller.register(sock, selectors.EVENT_READ, self.on_lingering_readable)
        except (OSError, KeyError, ValueError):
            util.close(sock)
            return
        self.lingering[sock.fileno()] = (sock, time.monotonic() + LINGER_SECONDS)

    def on_lingering_readable(self, sock: socket.socket) -> None:
        try:
            more = len(sock.recv(65536)) > 0
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            more = False
        if not more:
            self.end_lingering(sock)

    def end_lingering(self, sock: socket.socket) -> None:
        self.lingering.pop(sock.fileno(), None)
        try:
            self.poller.unregister(sock)
        except (OSError, KeyError, ValueError):
            pass
        util.close(sock)

    def murder_pending(self) -> None:
        """Also close connections that took too long to send a request or to close
        (all, when stopping)."""
        super().murder_pending()
        now = time.monotonic()
        for conn in list(self.reading.values()):
            if not self.alive or conn.deadline <= now:
                self.drop(conn)
        for sock, until in list(self.lingering.values()):
            if not self.alive or until <= now:
                self.end_lingering(sock)

    def _keepalive_after(self, conn: BufferedConn, keepalive: bool) -> bool:
        if keepalive and body_left_on_socket(conn.parser):
            return False  # close rather than wait for the client's rest in a thread
        return bool(super()._keepalive_after(conn, keepalive))
