"""How long a client may take to send its request and to take its answer.

A slow client holds a connection, and in a thread a thread, for as long as
it is slow; these rules bound that (docs/security.md, "Request bodies").
Time is the client's own: what it keeps the server waiting for (the main
loop for its request's bytes, a thread blocked reading its body or sending
its answer), never the time the server spends working or waiting for a
thread.

- A thread waits at most `idle` (WEB_BODY_IDLE_SECONDS) for one byte to
  move, either way.
- After a grace of `grace` (WEB_READ_SECONDS) of its time, the client keeps
  up `rate` (WEB_BODY_MIN_BYTES_PER_SECOND) on average: the bytes moved so
  far are at least rate x (its time - grace), for the request (head and
  body) and, counted afresh, for the answer. A trickle is cut soon after the
  grace, whatever length it declared; a client at a fraction f of the rate
  is cut after grace / (1 - f).

`PacedReader` applies them to a thread's reads of a body, `ClientSocket` to
every send of an answer; the worker's main loop applies `Pace.deadline`
(core/gunicorn_worker.py).
"""

from __future__ import annotations

import errno
import math
import socket
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

FILE_BLOCK = 64 * 1024  # a file's answer goes out through sendall in blocks of this


@dataclass
class Pace:
    """A client's time so far (`waited`) and the bytes it moved in it (`moved`)."""

    grace: float
    rate: float
    idle: float
    waited: float = 0.0
    moved: int = 0

    @classmethod
    def from_settings(cls) -> Pace:
        return cls(
            grace=float(settings.WEB_READ_SECONDS),
            rate=float(settings.WEB_BODY_MIN_BYTES_PER_SECOND),
            idle=float(settings.WEB_BODY_IDLE_SECONDS),
        )

    def left(self) -> float:
        """Seconds of its time the client has before it falls behind the rate."""
        return self.grace + self.moved / self.rate - self.waited

    def deadline(self, started: float) -> float:
        """When a client that began at `started` (time.monotonic()) and has been
        waited for ever since falls behind: the main loop's deadline."""
        return started + self.grace + self.moved / self.rate

    def behind(self, what: str) -> str:
        return f"{what} came slower than {self.rate:.0f} bytes a second after its first {self.grace:g} s"


class PacedReader:
    """The socket as a thread's request parser reads it (gunicorn's unreader calls
    `recv`), under the request's `Pace`. The socket is blocking again after each read."""

    def __init__(self, sock: socket.socket, pace: Pace) -> None:
        self.sock = sock
        self.pace = pace
        self.timeout: float | None = None  # set by gunicorn's drain (finish_body)

    def recv(self, size: int) -> bytes:
        pace = self.pace
        left = pace.left()
        if left <= 0:
            raise TimeoutError(pace.behind("the request"))
        wait = min(pace.idle, left, math.inf if self.timeout is None else self.timeout)
        started = time.monotonic()
        self.sock.settimeout(wait)
        try:
            data = self.sock.recv(size)
        except TimeoutError:
            if wait == pace.idle:
                raise TimeoutError(f"no byte arrived for {pace.idle:g} s") from None
            if wait == left:
                raise TimeoutError(pace.behind("the request")) from None
            raise TimeoutError("the request did not arrive within its deadline") from None
        finally:
            pace.waited += time.monotonic() - started
            self.sock.settimeout(None)
        pace.moved += len(data)
        return data

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout

    def gettimeout(self) -> float | None:
        return self.timeout


class AnswerNotTaken(BrokenPipeError):
    """The client stopped taking its answer (gthread ends such a request quietly,
    as a client that went away)."""


class ClientSocket(socket.socket):
    """A client's connection whose answer keeps to a `Pace` while one is set
    (`begin_answer`): each send waits at most `idle` for room, and the client's
    time in them keeps up with the rate. Past either the send raises
    AnswerNotTaken and `stalled` says why; the worker then resets the
    connection rather than lingering on it."""

    pace: Pace | None = None
    stalled: str | None = None

    @classmethod
    def adopt(cls, sock: socket.socket) -> ClientSocket:
        """The accepted `sock` as a ClientSocket (the same descriptor)."""
        return cls(sock.family, sock.type, sock.proto, fileno=sock.detach())

    def begin_answer(self, pace: Pace | None) -> None:
        self.pace, self.stalled = pace, None

    def sendall(self, data: Any, flags: int = 0) -> None:
        pace = self.pace
        if pace is None:
            super().sendall(data, flags)
            return
        view = memoryview(data).cast("B")
        while view:
            view = view[self._send_paced(view, flags, pace) :]

    def _send_paced(self, view: memoryview, flags: int, pace: Pace) -> int:
        left = pace.left()
        if left <= 0:
            raise self._stall(pace.behind("the answer was taken"))
        wait = min(pace.idle, left)
        previous = self.gettimeout()
        started = time.monotonic()
        self.settimeout(wait)
        try:
            sent = self.send(view, flags)
        except TimeoutError:
            if wait == pace.idle:
                raise self._stall(f"no byte of the answer was taken for {pace.idle:g} s") from None
            raise self._stall(pace.behind("the answer was taken")) from None
        finally:
            pace.waited += time.monotonic() - started
            self.settimeout(previous)
        pace.moved += sent
        return sent

    def _stall(self, reason: str) -> AnswerNotTaken:
        self.stalled = reason
        return AnswerNotTaken(errno.EPIPE, reason)

    def sendfile(self, file: Any, offset: int = 0, count: int | None = None) -> int:
        """A file's answer through `sendall`, so that it keeps the same pace (the
        kernel's sendfile would block without a deadline)."""
        file.seek(offset)
        sent = 0
        while count is None or sent < count:
            block = file.read(FILE_BLOCK if count is None else min(FILE_BLOCK, count - sent))
            if not block:
                break
            self.sendall(block)
            sent += len(block)
        return sent
