"""One connection to a news server (RFC 3977), built for reading overviews.

``over()`` streams lines as they arrive, compressed when the server offers it;
``body()`` reads one article's body, bounded (the inspection of releases);
which compressions and what happens when one fails: docs/seed-node.md
("The NNTP client").
"""

from __future__ import annotations

import calendar
import logging
import socket
import ssl
import time
import zlib
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, fields
from types import TracebackType
from typing import Any

from usenet.limits import MAX_MESSAGE_ID, MESSAGE_ID
from usenet.nntp.config import NewsServerConfig
from usenet.nntp.errors import (
    AuthRequired,
    BodyTooLarge,
    CompressionError,
    NNTPConnectionError,
    NNTPError,
    NNTPProtocolError,
    UnsafeArgument,
    error_for_reply,
)
from usenet.numbers import ascii_digits, whole_number

log = logging.getLogger(__name__)

_RECV_SIZE = 256 * 1024
# The most one fill inflates at once: a read of compressed bytes may stand for a thousand
# times as many (deflate's ratio), so a server's zeros grow the buffer a step at a time
# and the callers' bounds (a body's max_bytes, the line limit) stop them there.
INFLATE_STEP = 1 << 20
# A line this long without CRLF is garbage (or a broken decompressor), not an overview.
_MAX_LINE = 4 * 1024 * 1024
COMPRESSIONS = ("deflate", "gzip", "xzver")
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only

_TERMINATOR = b"\r\n.\r\n"  # the end of a multi-line block (after its last line's CRLF)

_YENC_PLAIN = bytes((i - 42) % 256 for i in range(256))
_YENC_ESCAPED = bytes((i - 106) % 256 for i in range(256))


@dataclass(frozen=True)
class GroupInfo:
    count: int
    first: int
    last: int
    name: str


class NNTPClient:
    """A single NNTP connection; use as a context manager or call connect()/quit()."""

    def __init__(
        self,
        host: str,
        port: int = 119,
        *,
        disabled_compressions: set[str] | None = None,
        **options: Any,
    ) -> None:
        """`options` are NewsServerConfig's: tls, username, password, timeout,
        connect_timeout, verify, ca_file, compression (an unknown one: TypeError)."""
        self.config = NewsServerConfig(host, port, **options)
        self.host, self.port = host, port
        # Shared with a pool so that a compression that failed once is never tried again.
        self.disabled_compressions = (
            disabled_compressions if disabled_compressions is not None else set()
        )
        self.capabilities: dict[str, list[str]] = {}
        self.compression_in_use: str | None = None
        self.current_group: str | None = None
        # The high-water mark of the last GROUP reply on this connection: a server
        # (INN's nnrpd; RFC 3977 allows it) fixes the group's range at GROUP time,
        # so articles past it stay invisible to OVER until GROUP is sent again.
        self.group_last: int | None = None
        self.posting_allowed = False
        self._sock: socket.socket | None = None
        self._buffer = bytearray()
        self._inflater: zlib._Decompress | None = None
        self._deflater: zlib._Compress | None = None
        self._reading_multiline = False
        self.recv_seconds = 0.0  # time spent waiting for the server's bytes

    @classmethod
    def from_config(cls, config: NewsServerConfig, **overrides: Any) -> NNTPClient:
        options = {f.name: getattr(config, f.name) for f in fields(config)}
        del options["host"], options["port"], options["connections"]
        return cls(config.host, config.port, **{**options, **overrides})

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        return f"<NNTPClient {self.host}:{self.port} {state}>"

    # -- connection ----------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def connect(self) -> NNTPClient:
        """Open the connection, greet, authenticate and switch on compression."""
        if self._sock is not None:
            return self
        address = f"{self.host}:{self.port}"
        try:
            sock = socket.create_connection(
                (self.host, self.port), timeout=self.config.connect_timeout
            )
        except OSError as exc:
            raise NNTPConnectionError(f"cannot connect to {address}: {exc}") from None
        if self.config.tls:
            try:
                sock = self._ssl_context().wrap_socket(sock, server_hostname=self.host)
            except (OSError, ssl.SSLError) as exc:
                sock.close()
                raise NNTPConnectionError(f"TLS handshake with {address} failed: {exc}") from None
        sock.settimeout(self.config.timeout)
        self._sock = sock
        self._buffer.clear()
        self._inflater = self._deflater = None
        self.compression_in_use = None
        self.current_group = None
        try:
            code, message = self._read_status()
            if code not in (200, 201):
                raise self._reply_error(code, message)
            self.posting_allowed = code == 200
            self._start_session()
        except BaseException:
            self.close()
            raise
        return self

    def _ssl_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.config.ca_file)
        if not self.config.verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        return context

    def _start_session(self) -> None:
        needs_auth = not self._load_capabilities()
        if "MODE-READER" in self.capabilities and "READER" not in self.capabilities:
            self.mode_reader()
        if self.config.username is not None and (needs_auth or "AUTHINFO" in self.capabilities):
            self.authenticate()
        elif needs_auth:
            raise AuthRequired("server wants credentials and none are configured", 480)
        if self.config.compression:
            self._enable_compression()

    def _load_capabilities(self) -> bool:
        """Read CAPABILITIES; False when the server first wants authentication."""
        try:
            lines = self._multiline_command("CAPABILITIES", (101,))
            capabilities: dict[str, list[str]] = {}
            for line in lines:
                words = line.decode("utf-8", "replace").split()
                if words:
                    capabilities[words[0].upper()] = [word.upper() for word in words[1:]]
        except AuthRequired:
            return False
        except NNTPError as exc:
            # Servers older than RFC 3977 answer 500; they get plain XOVER and no extras.
            if exc.code not in (500, 501):
                raise
            capabilities = {}
        self.capabilities = capabilities
        return True

    def mode_reader(self) -> None:
        code, _ = self._command("MODE READER", (200, 201))
        self.posting_allowed = code == 200
        self._load_capabilities()

    def authenticate(self) -> None:
        """AUTHINFO USER/PASS, then re-read CAPABILITIES as RFC 4643 requires."""
        if self.config.username is None:
            raise AuthRequired("no username configured", 480)
        code, _ = self._command(f"AUTHINFO USER {self.config.username}", (281, 381))
        if code == 381:
            if self.config.password is None:
                raise AuthRequired("server wants a password and none is configured", 481)
            self._command(f"AUTHINFO PASS {self.config.password}", (281,))
        self._load_capabilities()

    def _try_command(self, command: str, label: str, code: int) -> bool:
        """Send an optional command; False, logged, when the server refuses it."""
        try:
            self._command(command, (code,))
        except (NNTPConnectionError, NNTPProtocolError):
            raise
        except NNTPError as exc:
            log.info("%s refused by %s: %s", label, self.host, exc)
            return False
        return True

    def _enable_compression(self) -> None:
        offered = self.capabilities
        allowed = [name for name in COMPRESSIONS if name not in self.disabled_compressions]
        if "deflate" in allowed and "DEFLATE" in offered.get("COMPRESS", []):
            if self._try_command("COMPRESS DEFLATE", "COMPRESS DEFLATE", 206):
                # Everything after the 206 line is raw deflate, in both directions.
                self._inflater = zlib.decompressobj(-15)
                self._deflater = zlib.compressobj(wbits=-15)
                pending = bytes(self._buffer)
                self._buffer.clear()
                self._buffer += self._inflate(pending)
                self.compression_in_use = "deflate"
                return
        if "gzip" in allowed and "GZIP" in offered.get("XFEATURE-COMPRESS", []):
            if self._try_command(
                "XFEATURE COMPRESS GZIP TERMINATOR", "XFEATURE COMPRESS GZIP", 290
            ):
                self.compression_in_use = "gzip"
                return
        if "xzver" in allowed and "XZVER" in offered:
            self.compression_in_use = "xzver"

    def quit(self) -> None:
        """Say goodbye politely; the connection is closed whatever the server answers."""
        if self._sock is None:
            return
        try:
            if not self._reading_multiline:
                self._command("QUIT", (205,))
        except NNTPError:
            pass
        finally:
            self.close()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self.group_last = None
        self._buffer.clear()
        self._inflater = self._deflater = None
        self._reading_multiline = False
        if sock is not None:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> NNTPClient:
        return self.connect()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.quit()
        else:
            self.close()

    # -- commands ------------------------------------------------------------

    def group(self, name: str) -> GroupInfo:
        """GROUP: select a group and return its article count and number range."""
        _, message = self._command(f"GROUP {name}", (211,))
        words = message.split()
        try:
            count, first, last = (whole_number(word) for word in words[:3])
        except ValueError:  # fewer than three words, or one is not a number (NotANumber)
            raise NNTPProtocolError(f"bad GROUP reply: 211 {message}", 211) from None
        self.current_group = words[3] if len(words) > 3 else name
        self.group_last = last
        return GroupInfo(count=count, first=first, last=last, name=self.current_group)

    def list_active(self, wildmat: str | None = None) -> Iterator[tuple[str, int, int, str]]:
        """LIST ACTIVE [wildmat]: yield (name, last, first, flags) per group."""
        command = f"LIST ACTIVE {wildmat}" if wildmat else "LIST ACTIVE"
        for line in self._multiline_command(command, (215,)):
            words = line.decode("utf-8", "replace").split()
            if len(words) < 4 or not (ascii_digits(words[1]) and ascii_digits(words[2])):
                raise NNTPProtocolError(f"bad LIST ACTIVE line: {line[:200]!r}")
            yield words[0], int(words[1]), int(words[2]), words[3]

    def date(self) -> int:
        """DATE: the server's clock as Unix time."""
        _, message = self._command("DATE", (111,))
        stamp = message.split()[0] if message else ""
        if len(stamp) != 14 or not ascii_digits(stamp):
            raise NNTPProtocolError(f"bad DATE reply: 111 {message}", 111)
        parts = (stamp[0:4], stamp[4:6], stamp[6:8], stamp[8:10], stamp[10:12], stamp[12:14])
        year, month, day, hour, minute, second = (int(part) for part in parts)
        return calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))

    def body(
        self,
        message_id: str,
        max_bytes: int,
        deadline: float | None = None,
        *,
        stuffed: bool = False,
    ) -> bytes:
        """BODY of one article by message-id: its lines dot-unstuffed, each with its CRLF.

        `stuffed`: the lines as on the wire instead, dot-stuffing left in (``unstuff``
        undoes it; sabctools's decoder reads that form itself). A body longer than
        `max_bytes` as it is returned raises BodyTooLarge and costs the connection
        (its rest is unread), never the memory. A missing article raises
        NoSuchArticle (430). `deadline` (a time.monotonic() value): a body still
        arriving then raises NNTPConnectionError and costs the connection, so a
        server that trickles bytes (each read within the socket timeout) cannot hold
        the caller longer.
        """
        if len(message_id) > MAX_MESSAGE_ID or MESSAGE_ID.match(message_id) is None:
            raise UnsafeArgument(
                "not a message-id (<local@domain>, at most 250 characters); nothing was sent"
            )
        self._command(f"BODY {message_id}", (222,))
        fill = self._fill
        if deadline is not None:

            def fill() -> None:
                if time.monotonic() > deadline:
                    self.close()
                    raise NNTPConnectionError(
                        f"the body of {message_id} from {self.host}:{self.port} "
                        "was still arriving at its deadline"
                    )
                self._fill()

        self._reading_multiline = True
        finished = False
        try:
            # As on the wire, the body is at most a third longer: a stuffed dot comes
            # with a line of at least three bytes (".\r\n").
            wire = self._read_body(
                fill, max_bytes if stuffed else max_bytes + max_bytes // 3, message_id
            )
            body = wire if stuffed else unstuff(wire)
            if len(body) > max_bytes:
                raise BodyTooLarge(f"the body of {message_id} is longer than {max_bytes} bytes")
            finished = True
        finally:
            self._reading_multiline = False
            if not finished:
                self.close()  # its rest is unread (or the connection broke)
        return body

    def _read_body(self, fill: Callable[[], None], max_bytes: int, message_id: str) -> bytes:
        """The lines of a dot-terminated block as on the wire (still dot-stuffed, each
        with its line end), without the terminating ".\r\n"; BodyTooLarge once more
        than `max_bytes` of them have arrived.

        Nothing in the block is looked at but its tail: the server sends nothing
        after the terminator until it is sent another command, so the block is
        whole once what has arrived ends with "\r\n.\r\n" (or is ".\r\n", an
        empty body), and no line inside a stuffed block is ".". One check of five
        bytes a read and one copy at the end: no pass over the body in Python. (A
        server that sent more after a terminator, unasked, would hold the read
        until the deadline or the socket's timeout.)
        """
        buffer = self._buffer
        while not (buffer.endswith(_TERMINATOR) or buffer == _TERMINATOR[2:]):
            if len(buffer) > max_bytes + len(_TERMINATOR):
                raise BodyTooLarge(f"the body of {message_id} is longer than {max_bytes} bytes")
            fill()
        size = len(buffer) - 3  # the last line keeps its CRLF
        if size > max_bytes:
            raise BodyTooLarge(f"the body of {message_id} is longer than {max_bytes} bytes")
        with memoryview(buffer) as view:
            body = bytes(view[:size])
        buffer.clear()
        return body

    def over(self, first: int, last: int | None = None) -> Iterator[bytes]:
        """Stream overview lines of articles first..last (open-ended when last is None).

        Lines come without CRLF and dot-unstuffed, one at a time as they arrive.
        A compressed response that cannot be decoded makes the client reconnect
        without that compression and continue after the last line it yielded.
        Leaving the loop early closes the connection (the rest is unread).
        """
        resume = first
        while True:
            method = self.compression_in_use
            try:
                for line in self._over_once(resume, last):
                    yield line
                    number = line.split(b"\t", 1)[0]
                    if ascii_digits(number):
                        resume = int(number) + 1
                return
            except CompressionError as exc:
                if method is None:
                    raise
                log.warning(
                    "%s compressed overview from %s failed (%s); reconnecting without it",
                    method,
                    self.host,
                    exc.message,
                )
                self.disabled_compressions.add(method)
                self._reconnect()
                if last is not None and resume > last:
                    return

    def _over_once(self, first: int, last: int | None) -> Iterator[bytes]:
        span = f"{first}-{last}" if last is not None else f"{first}-"
        method = self.compression_in_use
        if method == "xzver":
            verb = "XZVER"
        elif method == "gzip" or "OVER" not in self.capabilities:
            verb = "XOVER"
        else:
            verb = "OVER"
        self._send(f"{verb} {span}")
        code, message = self._read_status()
        if code != 224:
            raise self._reply_error(code, message)
        if method == "gzip":
            lines = self._gzip_lines()
        elif method == "xzver":
            lines = self._xzver_lines()
        else:
            lines = self._read_multiline(self._buffer, self._fill)
        return self._stream(lines)

    def _reconnect(self) -> None:
        group = self.current_group
        self.close()
        self.connect()
        if group is not None:
            self.group(group)

    # -- wire ----------------------------------------------------------------

    def _command(self, line: str, expected: tuple[int, ...]) -> tuple[int, str]:
        self._send(line)
        code, message = self._read_status()
        if code not in expected:
            raise self._reply_error(code, message)
        return code, message

    def _multiline_command(self, line: str, expected: tuple[int, ...]) -> Iterator[bytes]:
        self._command(line, expected)
        return self._stream(self._read_multiline(self._buffer, self._fill))

    def _reply_error(self, code: int, message: str) -> NNTPError:
        message = self._scrub(message)
        if code == 400:
            # The server is closing; nothing more can be said on this connection.
            self.close()
        if code < 400:
            return NNTPProtocolError(f"unexpected reply: {message}", code)
        return error_for_reply(code, message)

    def _scrub(self, text: str) -> str:
        if self.config.password:
            text = text.replace(self.config.password, "***")
        return text

    def _send(self, line: str) -> None:
        if "\r" in line or "\n" in line or "\x00" in line:
            # An argument (a group name, a wildmat) that would end this command
            # and start another on a logged-in session. Never shown: it may hold
            # the password.
            raise UnsafeArgument(
                "a command argument holds CR, LF or NUL; nothing was sent to the news server"
            )
        if self._sock is None:
            raise NNTPConnectionError(f"not connected to {self.host}:{self.port}")
        if self._reading_multiline:
            raise NNTPProtocolError("a multi-line response is still being read on this connection")
        shown = "AUTHINFO PASS ***" if line.upper().startswith("AUTHINFO PASS") else line
        log.debug("%s:%s >> %s", self.host, self.port, shown)
        data = line.encode("utf-8") + b"\r\n"
        if self._deflater is not None:
            data = self._deflater.compress(data) + self._deflater.flush(zlib.Z_SYNC_FLUSH)
        try:
            self._sock.sendall(data)
        except OSError as exc:
            self.close()
            raise NNTPConnectionError(f"sending to {self.host}:{self.port} failed: {exc}") from None

    def _recv(self) -> bytes:
        if self._sock is None:
            raise NNTPConnectionError(f"not connected to {self.host}:{self.port}")
        started = time.perf_counter()
        if _QUICKACK is not None:
            # Acknowledge at once, not after the 40 ms delayed ACK: a server that
            # writes its status line and a small body apart (INN2's nnrpd) holds the
            # body back (Nagle) until that ACK, which cost every small BODY 40 ms.
            # Linux clears the flag as it acknowledges, so it is set before each read.
            try:
                self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
            except OSError:
                pass
        try:
            data = self._sock.recv(_RECV_SIZE)
        except TimeoutError:
            self.close()
            raise NNTPConnectionError(
                f"{self.host}:{self.port} sent nothing for {self.config.timeout} seconds"
            ) from None
        except OSError as exc:
            self.close()
            address = f"{self.host}:{self.port}"
            raise NNTPConnectionError(f"reading from {address} failed: {exc}") from None
        finally:
            self.recv_seconds += time.perf_counter() - started
        if not data:
            self.close()
            raise NNTPConnectionError(f"{self.host}:{self.port} closed the connection")
        return data

    def _inflate(self, data: bytes) -> bytes:
        """At most INFLATE_STEP bytes of what `data` inflates to; the rest of `data` waits
        in the inflater's unconsumed_tail for the next fill."""
        assert self._inflater is not None
        try:
            return self._inflater.decompress(data, INFLATE_STEP)
        except zlib.error as exc:
            self.close()
            raise CompressionError(f"COMPRESS DEFLATE stream is corrupt: {exc}") from None

    def _fill(self) -> None:
        if self._inflater is None:
            self._buffer += self._recv()
            return
        # What a read held past the last step is inflated before the socket is read again.
        self._buffer += self._inflate(self._inflater.unconsumed_tail or self._recv())

    def _read_line(self) -> bytes:
        buffer = self._buffer
        scanned = 0
        while (end := buffer.find(b"\r\n", scanned)) < 0:
            if len(buffer) > _MAX_LINE:
                self.close()
                raise NNTPProtocolError("line too long: no CRLF in 4 MiB")
            scanned = max(len(buffer) - 1, 0)
            self._fill()
        line = bytes(buffer[:end])
        del buffer[: end + 2]
        return line

    def _read_status(self) -> tuple[int, str]:
        line = self._read_line()
        text = line.decode("utf-8", "replace")
        if len(text) < 3 or not ascii_digits(text[:3]):
            self.close()
            raise NNTPProtocolError(f"expected a status line, got {self._scrub(text[:100])!r}")
        return int(text[:3]), text[4:].strip()

    def _read_multiline(self, buffer: bytearray, fill: Callable[[], None]) -> Iterator[bytes]:
        """Lines of a dot-terminated block from `buffer`, calling `fill` for more bytes."""
        scanned = 0
        while True:
            end = buffer.find(b"\r\n", scanned)
            if end < 0:
                if len(buffer) > _MAX_LINE:
                    self.close()
                    raise NNTPProtocolError("line too long: no CRLF in 4 MiB")
                scanned = max(len(buffer) - 1, 0)
                fill()
                continue
            line = bytes(buffer[:end])
            # Deleting from the front of a bytearray is amortised O(1) in CPython.
            del buffer[: end + 2]
            scanned = 0
            if line[:1] == b".":
                if len(line) == 1:
                    return
                line = line[1:]
            yield line

    def _stream(self, lines: Iterator[bytes]) -> Generator[bytes, None, None]:
        # The connection is only reusable once the terminator has been read, so
        # a consumer that stops early (or an error mid-way) costs the connection.
        self._reading_multiline = True
        finished = False
        try:
            yield from lines
            finished = True
        finally:
            self._reading_multiline = False
            if not finished:
                self.close()

    def _gzip_lines(self) -> Iterator[bytes]:
        """XFEATURE COMPRESS GZIP: the block after the status line is zlib or gzip data.

        With TERMINATOR the decompressed data ends with ".\\r\\n"; without it the
        ".\\r\\n" follows the compressed data. Both are accepted.
        """
        inflater = zlib.decompressobj(zlib.MAX_WBITS | 32)  # zlib or gzip header
        plain = bytearray()

        def decompress(data: bytes) -> None:
            try:
                plain.extend(inflater.decompress(data, INFLATE_STEP))  # the rest: unconsumed_tail
            except zlib.error as exc:
                self.close()
                raise CompressionError(f"gzip overview block is corrupt: {exc}") from None
            if inflater.eof:
                # Whatever follows the compressed stream is plain protocol again.
                self._buffer[:0] = inflater.unused_data

        def fill() -> None:
            if inflater.eof:
                terminator = self._read_line()
                if terminator != b".":
                    self.close()
                    raise CompressionError("gzip overview block not followed by '.'")
                plain.extend(b".\r\n")
                return
            if inflater.unconsumed_tail:
                decompress(inflater.unconsumed_tail)
            elif self._buffer:
                pending = bytes(self._buffer)
                self._buffer.clear()
                decompress(pending)
            else:
                decompress(self._recv())

        yield from self._read_multiline(plain, fill)
        # With TERMINATOR the stream may end after the '.' line; consume its tail.
        while not inflater.eof:
            fill()
        if plain:
            self._buffer[:0] = plain

    def _xzver_lines(self) -> Iterator[bytes]:
        """XZVER: a dot-terminated yEnc block whose decoded bytes are raw-deflated XOVER lines."""
        encoded = self._read_multiline(self._buffer, self._fill)
        header = next(encoded, None)
        if header is None or not header.startswith(b"=ybegin"):
            for _ in encoded:
                pass
            raise CompressionError("XZVER reply does not start with =ybegin")
        inflater = zlib.decompressobj(-15)
        plain = bytearray()
        crc = 0
        trailer = b""
        for line in encoded:
            if line.startswith(b"=yend"):
                trailer = line
                continue
            if line.startswith(b"=ypart"):
                continue
            data = _yenc_decode(line)
            crc = zlib.crc32(data, crc)
            try:
                plain += inflater.decompress(data)
            except zlib.error as exc:
                self.close()
                raise CompressionError(f"XZVER data is corrupt: {exc}") from None
            yield from _complete_lines(plain)
        expected_crc = _yenc_crc(trailer)
        if expected_crc is not None and expected_crc != crc:
            self.close()
            raise CompressionError("XZVER yEnc CRC mismatch")
        try:
            plain += inflater.flush()
        except zlib.error as exc:
            self.close()
            raise CompressionError(f"XZVER data is corrupt: {exc}") from None
        yield from _complete_lines(plain)
        if plain.strip():
            self.close()
            raise CompressionError("XZVER data ends in the middle of a line")


def unstuff(lines: bytes) -> bytes:
    """Whole lines as on the wire (each with its CRLF) with the leading dot of each
    line removed (RFC 3977 dot-stuffing: ".." on the wire is "." in the article)."""
    if lines.startswith(b"."):
        lines = lines[1:]
    if b"\r\n." in lines:
        lines = lines.replace(b"\r\n.", b"\r\n")
    return lines


def _complete_lines(buffer: bytearray) -> Iterator[bytes]:
    while (end := buffer.find(b"\r\n")) >= 0:
        line = bytes(buffer[:end])
        del buffer[: end + 2]
        if line == b".":
            continue
        yield line


def _yenc_decode(line: bytes) -> bytes:
    pieces = line.split(b"=")
    decoded = [pieces[0].translate(_YENC_PLAIN)]
    for piece in pieces[1:]:
        if piece:
            decoded.append(piece[:1].translate(_YENC_ESCAPED))
            decoded.append(piece[1:].translate(_YENC_PLAIN))
    return b"".join(decoded)


def _yenc_crc(trailer: bytes) -> int | None:
    for word in trailer.split():
        if word.startswith((b"crc32=", b"pcrc32=")):
            try:
                return int(word.split(b"=", 1)[1], 16)
            except ValueError:
                return None
    return None
