"""gunicorn's gthread worker, reading requests in its main loop so that no client holds a thread.

A gthread worker hands a connection to a thread as soon as its first bytes
arrive, and the thread then blocks reading the head and the body: fifty
clients sending a byte a second hold fifty threads, and a lease call from
another node waits behind them. This worker reads, in its main loop and
without blocking, each request's head and then:

- refuses at once, without a thread and without reading a byte of the body,
  a request whose body its route or its caller may not send
  (core/api/bodies.py: none on a GET, a few KiB without credentials), and
  a head that has not ended within HEAD_BYTES (431): an unfinished head never
  goes to a thread;
- reads a body of up to BUFFER_BYTES whole before a thread takes the request
  (what nginx's request buffering does);
- hands a larger or chunked body (a snapshot upload streams) to a thread at
  once; the application checks the token or session before reading it.

A client keeps to a pace (core/client_pace.py): after WEB_READ_SECONDS
of its time, WEB_BODY_MIN_BYTES_PER_SECOND on average, and in a thread never
WEB_BODY_IDLE_SECONDS without a byte moving, both for its request and for
its answer. A request that falls behind in the main loop is answered there
(408 for a head, 400 for a body) and closed; a thread's read gives up the
same way (the application's 400), and a thread's send of an answer the
client does not take gives up and resets the connection. An answer after
which a body is left unread says `Connection: close` and closes the
connection rather than draining it in a thread. Connections are closed
gracefully from the main loop (gunicorn's own graceful close waits up to 2 s
there, blocking every other connection); a closing connection counts
against worker_connections until its socket is closed, and when accept()
runs out of files the worker stops accepting for a moment rather than
dying. Its base, QueueTimedWorker, times each request's wait for a thread
(core/queue_wait.py), so an API call queued too long is told to come
back (503). gunicorn's own TLS is refused: it would hide every byte from the
main loop (terminate TLS in the proxy).
docs/deploy.md ("Workers"), docs/security.md ("Request bodies").
"""

from __future__ import annotations

import errno
import selectors
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from django.http import HttpResponse
from gunicorn import util
from gunicorn.http.body import ChunkedReader, LengthReader
from gunicorn.workers.gthread import TConn, ThreadWorker

from core import queue_wait
from core.api import bodies
from core.client_pace import ClientSocket, Pace, PacedReader

BUFFER_BYTES = 1 << 20  # bodies up to this are read whole before a thread is taken
HEAD_BYTES = 64 * 1024  # a head not ended by then is refused (431) by the main loop
LINGER_SECONDS = 2.0  # a closing connection's unread bytes are discarded this long at most
ACCEPT_PAUSE_SECONDS = 0.5  # out of files: accept nothing for this long, then try again
OUT_OF_FILES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
HEAD_TOO_LARGE = bodies.Refusal(
    431,
    "head_too_large",
    f"The request's head (its request line and headers) is over {HEAD_BYTES} bytes; "
    "send fewer or shorter headers.",
)
TLS_REFUSED = (
    "core.gunicorn_worker.BufferingWorker reads each request in its main loop, "
    "which gunicorn's own TLS would hide from it (and with it every limit on slow "
    "clients): terminate TLS in the proxy in front (docs/deploy.md) and run gunicorn "
    "without --certfile and --keyfile."
)


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


def late_refusal(conn: BufferedConn) -> bodies.Refusal:
    """The answer to a request that fell behind its pace in the main loop."""
    behind = conn.pace.behind("it")
    if conn.head is None:
        return bodies.Refusal(
            408,
            "timeout",
            f"The request's head did not arrive in time ({behind}); send it again, whole.",
        )
    return bodies.Refusal(
        400, "invalid", f"The body broke off before its end ({behind}); send it again."
    )


def closing_unread_bodies(app: Callable[..., Iterable[bytes]], serving: threading.local) -> Any:
    """The WSGI `app`, whose answers say `Connection: close` when the request's body is
    left unread on the socket (the connection closes after them): a proxy keeping the
    connection alive would otherwise send its next request into a closing socket."""

    def application(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        result = app(environ, start_response)
        conn = getattr(serving, "conn", None)
        if conn is not None and body_left_on_socket(conn.parser):
            conn.parser.mesg.force_close()  # read when the answer's headers go out
        return result

    return application


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

    sock: ClientSocket

    def __init__(self, *args: Any, linger: Callable[[BufferedConn], None], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.early = bytearray()
        self.linger = linger
        self.reader: PacedReader | None = None
        self.begin(time.monotonic())

    def begin(self, now: float) -> None:
        """A new request starts arriving (with what is buffered of it already)."""
        self.started = now
        self.pace = Pace.from_settings()
        self.pace.moved = len(self.early)
        self.head: bodies.Head | None = None
        self.body_start = 0

    @property
    def deadline(self) -> float:
        return self.pace.deadline(self.started)

    def init(self) -> None:
        fresh = not self.initialized
        super().init()
        if fresh:
            self.reader = PacedReader(self.sock, self.pace)
            self.parser.unreader.sock = self.reader
        if fresh and self.early:
            self.parser.unreader.unread(bytes(self.early))
            self.early.clear()

    def close(self, graceful: bool = False) -> None:
        if graceful:
            self.linger(self)  # without blocking the main loop
            return
        super().close(graceful)


class BufferingWorker(QueueTimedWorker):
    """`--worker-class core.gunicorn_worker.BufferingWorker` (manage.py serve)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reading: dict[int, BufferedConn] = {}
        self.lingering: dict[int, tuple[socket.socket, float]] = {}
        self.accept_paused_until = 0.0
        self.serving = threading.local()  # the connection a thread is answering

    @classmethod
    def check_config(cls, cfg: Any, log: Any) -> None:
        if cfg.is_ssl:
            raise RuntimeError(TLS_REFUSED)  # gunicorn prints it and exits
        super().check_config(cfg, log)

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi: Any = closing_unread_bodies(self.wsgi, self.serving)

    def accept(self, listener: socket.socket) -> None:
        try:
            accepted, client_addr = listener.accept()
        except OSError as exc:
            if exc.errno in OUT_OF_FILES:
                self.pause_accepting(exc)
            elif exc.errno not in (errno.EAGAIN, errno.ECONNABORTED, errno.EWOULDBLOCK):
                raise
            return
        self.nr_conns += 1
        client_sock = ClientSocket.adopt(accepted)
        server = listener.getsockname()
        conn = BufferedConn(self.cfg, client_sock, client_addr, server, linger=self.linger)
        self.read_ahead(conn)

    def pause_accepting(self, exc: OSError) -> None:
        """Out of files (or socket memory): leave new connections in the listen backlog
        for a moment, while the open ones finish and close, instead of dying."""
        self.accept_paused_until = time.monotonic() + ACCEPT_PAUSE_SECONDS
        self.set_accept_enabled(False)
        self.log.warning(
            "cannot accept a connection (%s) with %d open; accepting again in %g s",
            exc.strerror,
            self.nr_conns,
            ACCEPT_PAUSE_SECONDS,
        )

    def set_accept_enabled(self, enabled: bool) -> None:
        if enabled and time.monotonic() < self.accept_paused_until:
            enabled = False
        super().set_accept_enabled(enabled)

    def on_client_socket_readable(self, conn: BufferedConn, client: socket.socket) -> None:
        """A kept-alive connection's next request: read it ahead too."""
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self.read_ahead(conn)

    def enqueue_req(self, conn: BufferedConn) -> None:
        """gthread's call for a kept-alive connection whose next request is buffered
        already (pipelined): read it ahead like any other."""
        if not conn.initialized:
            super().enqueue_req(conn)
            return
        conn.early += conn.parser.unreader.take_buffered()
        self.read_ahead(conn)

    def handle(self, conn: BufferedConn) -> Any:
        if conn.reader is not None:
            conn.reader.pace = conn.pace
        conn.sock.begin_answer(Pace.from_settings())
        try:
            return super().handle(conn)
        finally:
            conn.sock.pace = None  # `stalled` stays for the close

    def handle_request(self, req: Any, conn: BufferedConn) -> Any:
        self.serving.conn = conn
        try:
            return super().handle_request(req, conn)
        finally:
            self.serving.conn = None

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
        conn.pace.moved += len(data)
        self.advance(conn)

    def advance(self, conn: BufferedConn) -> None:
        """Read the head, then refuse the request, wait for its body, or hand it over."""
        if conn.head is None:
            end = conn.early.find(b"\r\n\r\n")
            if end < 0 or end + 4 > HEAD_BYTES:
                if len(conn.early) >= HEAD_BYTES:
                    self.refuse(conn, bodies.head_of_unfinished(conn.early), HEAD_TOO_LARGE)
                return
            head = bodies.head_from_bytes(bytes(conn.early[:end]))
            if head is None:
                self.hand_over(conn)  # a whole head, but not a request's: the parser refuses it
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
        """Note the head; answer 100 Continue to a body read here."""
        conn.head, conn.body_start = head, end + 4
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
        conn.pace.waited = time.monotonic() - conn.started  # the main loop waited on the client
        conn.data_ready = True
        if conn.initialized:  # a kept-alive connection: its parser exists already
            conn.parser.unreader.unread(bytes(conn.early))
            conn.early.clear()
        super().enqueue_req(conn)

    def refuse(self, conn: BufferedConn, head: bodies.Head, refused: bodies.Refusal) -> None:
        """Answer from the main loop, without reading the rest, and close."""
        self.stop_reading(conn)
        self.log.info("refused %s %s unread: %d", head.method, head.path[:200], refused.status)
        try:
            conn.sock.send(response_bytes(bodies.refusal_response(head, refused)))
        except OSError:
            pass
        self.nr_conns -= 1
        self.linger(conn)

    def time_out(self, conn: BufferedConn) -> None:
        """A request that fell behind its pace in the main loop: answered if any of it
        came (408 for a head, 400 for a body), closed either way."""
        if not conn.early and conn.head is None:
            self.drop(conn)  # nothing arrived: nothing to answer
            return
        head = conn.head or bodies.head_of_unfinished(conn.early)
        self.refuse(conn, head, late_refusal(conn))

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
        until it closes too (so the answer is not cut by a reset), in the main loop.
        The socket counts as a connection until it is closed. A client that stopped
        taking its answer is reset at once instead."""
        sock = conn.sock
        if sock.stalled:
            self.log.info("closed the connection of %s: %s", conn.client, sock.stalled)
            reset(sock)
            return
        try:
            sock.shutdown(socket.SHUT_WR)
            sock.setblocking(False)
            self.poller.register(sock, selectors.EVENT_READ, self.on_lingering_readable)
        except (OSError, KeyError, ValueError):
            util.close(sock)
            return
        self.nr_conns += 1
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
        if self.lingering.pop(sock.fileno(), None) is not None:
            self.nr_conns -= 1
        try:
            self.poller.unregister(sock)
        except (OSError, KeyError, ValueError):
            pass
        util.close(sock)

    def murder_pending(self) -> None:
        """Also answer and close requests that fell behind their pace, and close
        connections that took too long to close (all, when stopping)."""
        super().murder_pending()
        now = time.monotonic()
        for conn in list(self.reading.values()):
            if not self.alive:
                self.drop(conn)
            elif conn.deadline <= now:
                self.time_out(conn)
        for sock, until in list(self.lingering.values()):
            if not self.alive or until <= now:
                self.end_lingering(sock)

    def _keepalive_after(self, conn: BufferedConn, keepalive: bool) -> bool:
        if keepalive and body_left_on_socket(conn.parser):
            return False  # close rather than wait for the client's rest in a thread
        return bool(super()._keepalive_after(conn, keepalive))


def reset(sock: socket.socket) -> None:
    """Close with a reset: the kernel drops what the client never took."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    except OSError:
        pass
    util.close(sock)
