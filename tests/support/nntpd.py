"""A small asyncio NNTP server for fast, deterministic client tests.

It runs on 127.0.0.1 with an ephemeral port in a background thread. Tests
fill groups (or give a function that makes articles on demand, so a sparse
group of ten million articles costs nothing), switch on faults (no OVER,
forced error replies, slow lines, dropped connections, corrupt compressed
data) and read back what the client sent through the counters.
"""

from __future__ import annotations

import asyncio
import bisect
import fnmatch
import ssl
import threading
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field


@dataclass
class Article:
    subject: str = "a subject"
    date: str = "Mon, 02 Jan 2006 15:04:05 +0000"
    from_: str = "poster@example.com"
    message_id: str = ""
    references: str = ""
    bytes: int = 1000
    lines: int = 10

    def overview(self, number: int) -> bytes:
        message_id = self.message_id or f"<{number}@example.com>"
        fields = (
            str(number),
            self.subject,
            self.from_,
            self.date,
            message_id,
            self.references,
            str(self.bytes),
            str(self.lines),
        )
        return "\t".join(fields).encode("utf-8")


@dataclass
class Group:
    """Either stored `articles`, or `article_at(number)` over first..last (None = a hole)."""

    name: str
    articles: dict[int, Article] = field(default_factory=dict)
    first: int | None = None
    last: int | None = None
    article_at: Callable[[int], Article | None] | None = None

    def water_marks(self) -> tuple[int, int, int]:
        if self.article_at is not None:
            assert self.first is not None and self.last is not None
            return self.last - self.first + 1, self.first, self.last
        if not self.articles:
            return 0, self.first or 1, self.last or 0
        numbers = self.articles.keys()
        return len(self.articles), self.first or min(numbers), self.last or max(numbers)

    def articles_in(self, low: int, high: int) -> Iterator[tuple[int, Article]]:
        if self.article_at is not None:
            assert self.first is not None and self.last is not None
            for number in range(max(low, self.first), min(high, self.last) + 1):
                article = self.article_at(number)
                if article is not None:
                    yield number, article
            return
        numbers = sorted(self.articles)
        start = bisect.bisect_left(numbers, low)
        for number in numbers[start:]:
            if number > high:
                break
            yield number, self.articles[number]


def yenc_encode(data: bytes, line_length: int = 128) -> list[bytes]:
    lines: list[bytes] = []
    line = bytearray()
    for byte in data:
        encoded = (byte + 42) % 256
        if encoded in (0, 10, 13, 61):
            line += bytes((61, (encoded + 64) % 256))
        else:
            line.append(encoded)
        if len(line) >= line_length:
            lines.append(bytes(line))
            line.clear()
    if line:
        lines.append(bytes(line))
    return lines


def _matches(name: str, wildmat: str) -> bool:
    # RFC 3977 wildmat: comma-separated patterns, the last match wins, '!' negates.
    matched = False
    for pattern in wildmat.split(","):
        negated = pattern.startswith("!")
        if fnmatch.fnmatchcase(name, pattern.lstrip("!")):
            matched = not negated
    return matched


class NNTPServer:
    """Start with `with NNTPServer() as server:`; connect to server.host / server.port."""

    def __init__(
        self,
        *,
        ssl_context: ssl.SSLContext | None = None,
        users: dict[str, str] | None = None,
        require_auth: bool = False,
        advertise_over: bool = True,
        capabilities_supported: bool = True,
        mode_reader_needed: bool = False,
        offer_deflate: bool = False,
        offer_gzip: bool = False,
        offer_xzver: bool = False,
    ) -> None:
        self.ssl_context = ssl_context
        self.users = users or {}
        self.require_auth = require_auth
        self.advertise_over = advertise_over
        self.capabilities_supported = capabilities_supported
        self.mode_reader_needed = mode_reader_needed
        self.offer_deflate = offer_deflate
        self.offer_gzip = offer_gzip
        self.offer_xzver = offer_xzver
        # BODY by message-id: the bodies this server has (CRLF lines); any other is 430.
        self.bodies: dict[str, bytes] = {}
        # Faults, read at each command so a test may change them between calls.
        self.greeting: tuple[int, str] = (200, "test server ready, posting allowed")
        self.forced_replies: dict[str, tuple[int, str]] = {}
        self.reply_delay = 0.0
        self.line_delay = 0.0
        self.drop_after_lines: int | None = None
        self.corrupt_compression = False
        # Compressed lines sent intact before the garbage starts (COMPRESS DEFLATE).
        self.corrupt_after_lines = 0
        # After this many lines of a multi-line reply, wait until `release` is set.
        self.hold_after_lines: int | None = None
        self.release = threading.Event()
        self.clock: Callable[[], float] = time.time

        self.groups: dict[str, Group] = {}
        self.connections = 0
        self.commands: list[str] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.host = "127.0.0.1"
        self.port = 0

    # -- test-facing helpers ---------------------------------------------------

    def add_group(
        self,
        name: str,
        articles: dict[int, Article] | None = None,
        **synthetic: object,
    ) -> Group:
        group = Group(name, articles or {}, **synthetic)  # type: ignore[arg-type]
        self.groups[name] = group
        return group

    def count(self, verb: str) -> int:
        """How many commands with this verb (e.g. "OVER", "XOVER") have been received."""
        with self._lock:
            return Counter(command.split()[0].upper() for command in self.commands)[verb.upper()]

    def reset_counters(self) -> None:
        with self._lock:
            self.commands.clear()
            self.connections = 0

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> NNTPServer:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def run() -> None:
            assert self._loop is not None
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._serve, self.host, 0, ssl=self.ssl_context)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, name="nntpd", daemon=True)
        self._thread.start()
        ready.wait(5)
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return

        async def shut_down() -> None:
            assert self._server is not None
            self._server.close()
            for writer in list(self._writers):
                writer.transport.abort()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shut_down(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
        self._loop = self._thread = None

    def __enter__(self) -> NNTPServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with self._lock:
            self.connections += 1
        self._writers.add(writer)
        try:
            await _Session(self, reader, writer).run()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            self._writers.discard(writer)
            writer.transport.abort()

    def _record(self, line: str) -> None:
        shown = "AUTHINFO PASS ***" if line.upper().startswith("AUTHINFO PASS") else line
        with self._lock:
            self.commands.append(shown)


class _Dropped(Exception):
    """The fault injection hung up on the client."""


class _Session:
    def __init__(
        self, server: NNTPServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.incoming = bytearray()
        self.inflater: zlib._Decompress | None = None
        self.deflater: zlib._Compress | None = None
        self.user: str | None = None
        self.authenticated = False
        self.reader_mode = False
        self.gzip = False
        self.gzip_terminator = False
        self.group: Group | None = None

    async def read_line(self) -> str | None:
        while (end := self.incoming.find(b"\r\n")) < 0:
            data = await self.reader.read(65536)
            if not data:
                return None
            if self.inflater is not None:
                data = self.inflater.decompress(data)
            self.incoming += data
        line = bytes(self.incoming[:end])
        del self.incoming[: end + 2]
        return line.decode("utf-8", "replace")

    async def write(self, data: bytes) -> None:
        if self.deflater is not None:
            data = self.deflater.compress(data) + self.deflater.flush(zlib.Z_SYNC_FLUSH)
        self.writer.write(data)
        await self.writer.drain()

    async def reply(self, code: int, text: str) -> None:
        await self.write(f"{code} {text}\r\n".encode())

    async def multiline(self, code: int, text: str, lines: Iterable[bytes]) -> None:
        await self.reply(code, text)
        await self.write_block(lines)

    async def write_block(self, lines: Iterable[bytes], terminate: bool = True) -> None:
        server = self.server
        chunk = bytearray()
        for sent, line in enumerate(lines):
            if server.drop_after_lines is not None and sent >= server.drop_after_lines:
                await self.write(bytes(chunk))
                raise _Dropped
            if server.hold_after_lines is not None and sent == server.hold_after_lines:
                await self.write(bytes(chunk))
                chunk.clear()
                loop = asyncio.get_running_loop()
                await loop.run_in_executor(None, server.release.wait, 10)
            if line[:1] == b".":
                chunk += b"."
            chunk += line + b"\r\n"
            if server.line_delay:
                await self.write(bytes(chunk))
                chunk.clear()
                await asyncio.sleep(server.line_delay)
            elif len(chunk) > 65536:
                await self.write(bytes(chunk))
                chunk.clear()
        if terminate:
            chunk += b".\r\n"
        await self.write(bytes(chunk))

    async def run(self) -> None:
        server = self.server
        code, text = server.greeting
        await self.reply(code, text)
        if code >= 400:
            return
        while True:
            line = await self.read_line()
            if line is None:
                return
            server._record(line)
            if server.reply_delay:
                await asyncio.sleep(server.reply_delay)
            words = line.split()
            if not words:
                await self.reply(500, "empty command")
                continue
            verb = words[0].upper()
            forced = server.forced_replies.get(verb)
            if forced is not None:
                await self.reply(*forced)
                if forced[0] == 400:
                    return
                continue
            if verb == "QUIT":
                await self.reply(205, "bye")
                return
            try:
                await self.dispatch(verb, words[1:])
            except _Dropped:
                return

    def needs_auth(self, verb: str) -> bool:
        allowed = ("AUTHINFO", "CAPABILITIES", "MODE", "QUIT")
        return self.server.require_auth and not self.authenticated and verb not in allowed

    async def dispatch(self, verb: str, args: list[str]) -> None:
        if self.needs_auth(verb):
            await self.reply(480, "authentication required")
            return
        handler = getattr(self, f"do_{verb.lower()}", None)
        if handler is None:
            await self.reply(500, "unknown command")
            return
        await handler(args)

    async def do_body(self, args: list[str]) -> None:
        body = self.server.bodies.get(args[0]) if args else None
        if body is None:
            await self.reply(430, "no such article")
            return
        lines = body.split(b"\r\n")
        await self.multiline(222, f"0 {args[0]}", lines[:-1] if lines[-1] == b"" else lines)

    async def do_capabilities(self, args: list[str]) -> None:
        server = self.server
        if not server.capabilities_supported:
            await self.reply(500, "unknown command")
            return
        lines = ["VERSION 2", "IMPLEMENTATION nntpd test server", "LIST ACTIVE"]
        if server.mode_reader_needed and not self.reader_mode:
            lines.append("MODE-READER")
        else:
            lines.append("READER")
            if server.advertise_over:
                lines.append("OVER")
        if server.users and not self.authenticated:
            lines.append("AUTHINFO USER")
        if server.offer_deflate and self.inflater is None:
            lines.append("COMPRESS DEFLATE")
        if server.offer_gzip:
            lines.append("XFEATURE-COMPRESS GZIP TERMINATOR")
        if server.offer_xzver:
            lines.append("XZVER")
        await self.multiline(101, "capability list follows", (s.encode() for s in lines))

    async def do_mode(self, args: list[str]) -> None:
        if [arg.upper() for arg in args] != ["READER"]:
            await self.reply(501, "syntax error")
            return
        self.reader_mode = True
        await self.reply(200, "reader mode, posting allowed")

    async def do_authinfo(self, args: list[str]) -> None:
        if len(args) != 2 or args[0].upper() not in ("USER", "PASS"):
            await self.reply(501, "syntax error")
        elif args[0].upper() == "USER":
            self.user = args[1]
            await self.reply(381, "password required")
        elif self.user is None:
            await self.reply(482, "USER first")
        elif self.server.users.get(self.user) == args[1]:
            self.authenticated = True
            await self.reply(281, "authentication accepted")
        else:
            await self.reply(481, "authentication failed")

    async def do_compress(self, args: list[str]) -> None:
        if not self.server.offer_deflate or [a.upper() for a in args] != ["DEFLATE"]:
            await self.reply(503, "compression not available")
            return
        await self.reply(206, "compression active")
        self.inflater = zlib.decompressobj(-15)
        self.deflater = zlib.compressobj(wbits=-15)
        leftover = bytes(self.incoming)
        self.incoming = bytearray(self.inflater.decompress(leftover))

    async def do_xfeature(self, args: list[str]) -> None:
        words = [a.upper() for a in args]
        if not self.server.offer_gzip or words[:2] != ["COMPRESS", "GZIP"]:
            await self.reply(500, "unknown feature")
            return
        self.gzip = True
        self.gzip_terminator = "TERMINATOR" in words[2:]
        await self.reply(290, "feature enabled")

    async def do_group(self, args: list[str]) -> None:
        group = self.server.groups.get(args[0]) if args else None
        if group is None:
            await self.reply(411, "no such group")
            return
        self.group = group
        count, first, last = group.water_marks()
        await self.reply(211, f"{count} {first} {last} {group.name}")

    async def do_list(self, args: list[str]) -> None:
        keyword = args[0].upper() if args else "ACTIVE"
        if keyword != "ACTIVE":
            await self.reply(503, "only LIST ACTIVE here")
            return
        wildmat = args[1] if len(args) > 1 else "*"
        lines = []
        for group in self.server.groups.values():
            if _matches(group.name, wildmat):
                _, first, last = group.water_marks()
                lines.append(f"{group.name} {last} {first} y".encode())
        await self.multiline(215, "list of newsgroups follows", lines)

    async def do_date(self, args: list[str]) -> None:
        stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(self.server.clock()))
        await self.reply(111, stamp)

    async def do_over(self, args: list[str]) -> None:
        await self.overview(args, compressed_with="gzip" if self.gzip else None)

    async def do_xover(self, args: list[str]) -> None:
        await self.overview(args, compressed_with="gzip" if self.gzip else None)

    async def do_xzver(self, args: list[str]) -> None:
        if not self.server.offer_xzver:
            await self.reply(500, "unknown command")
            return
        await self.overview(args, compressed_with="xzver")

    async def overview(self, args: list[str], compressed_with: str | None) -> None:
        if self.group is None:
            await self.reply(412, "no newsgroup selected")
            return
        if not args:
            await self.reply(420, "no current article")
            return
        low_text, dash, high_text = args[0].partition("-")
        try:
            low = int(low_text)
            high = int(high_text) if high_text else (2**63 if dash else low)
        except ValueError:
            await self.reply(501, "bad range")
            return
        found = self.group.articles_in(low, high)
        first = next(found, None)
        if first is None:
            await self.reply(423, "no articles in that range")
            return
        lines = (article.overview(number) for number, article in _chain(first, found))
        if compressed_with == "gzip":
            await self.overview_gzip(lines)
        elif compressed_with == "xzver":
            await self.overview_xzver(lines)
        elif self.deflater is not None and self.server.corrupt_compression:
            await self.reply(224, "overview follows")
            intact = [line for _, line in zip(range(self.server.corrupt_after_lines), lines)]
            await self.write_block(intact, terminate=False)
            # Let the client read the good part on its own before the garbage.
            await asyncio.sleep(0.2 if intact else 0)
            self.writer.write(b"this is not deflate data \x00\xff" * 40)
            await self.writer.drain()
        else:
            await self.multiline(224, "overview follows", lines)

    async def overview_gzip(self, lines: Iterator[bytes]) -> None:
        body = b"".join((b"." + line if line[:1] == b"." else line) + b"\r\n" for line in lines)
        if self.gzip_terminator:
            body += b".\r\n"
        packed = zlib.compress(body)
        if self.server.corrupt_compression:
            packed = packed[:10] + b"\x00garbage\xff" * 8 + packed[10:]
        await self.reply(224, "overview follows (compressed)")
        await self.write(packed if self.gzip_terminator else packed + b".\r\n")

    async def overview_xzver(self, lines: Iterator[bytes]) -> None:
        body = b"".join(line + b"\r\n" for line in lines)
        packer = zlib.compressobj(wbits=-15)
        packed = packer.compress(body) + packer.flush()
        if self.server.corrupt_compression:
            packed = b"\xff\xfe garbage, not deflate" + packed
        encoded = yenc_encode(packed)
        block = [
            f"=ybegin line=128 size={len(packed)} name=xzver".encode(),
            *encoded,
            f"=yend size={len(packed)} crc32={zlib.crc32(packed):08x}".encode(),
        ]
        await self.multiline(224, "compressed overview follows", block)


def _chain(first: tuple[int, Article], rest: Iterator[tuple[int, Article]]) -> Iterator:
    yield first
    yield from rest


def numbered_articles(count: int, holes: int = 7) -> dict[int, Article]:
    """Articles 1..count minus every `holes`-th, some subjects starting with a dot."""
    return {
        number: Article(subject=f".dotted {number}" if number % 5 == 0 else f"post {number}")
        for number in range(1, count + 1)
        if number % holes
    }
