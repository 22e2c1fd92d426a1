"""A private, throw-away INN2 news server for integration tests.

`InnServer` builds a complete INN instance under a temporary directory (its own
inn.conf and every path in it), starts `innd` for feeding on one loopback port and a
standalone `nnrpd` for readers on another, and injects generated articles over a
streaming (TAKETHIS) feed so thousands post in seconds. `NntpClient` is a deliberately
small NNTP reader used to check what the server serves, including COMPRESS DEFLATE.

Needs Debian's `inn2` package: run `.ci/install-inn2` as root. The tests then run
as any user: root drops INN to `news`; anyone else runs INN as themselves in a
user namespace where they are `news` (innd accepts no other user).
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from tests.support.net import LOOPBACK, free_port
from tests.support.usenet import Article
from usenet.nntp import GroupInfo

INN_BIN = Path("/usr/lib/news/bin")
SYSTEM_ETC = Path("/etc/news")
EXAMPLES = Path("/usr/lib/news/examples")
INSTALL_HINT = "INN2 is not installed: run `sudo .ci/install-inn2` (Debian package inn2)."


class InnError(RuntimeError):
    """The private INN instance could not be built, started or driven."""


class InnNotInstalled(InnError):
    pass


def check_installed() -> None:
    """Raise InnNotInstalled with the install hint unless INN2's programs are there."""
    missing = [
        name
        for name in ("innd", "nnrpd", "ctlinnd", "makedbz")
        if not os.access(INN_BIN / name, os.X_OK)
    ]
    if missing or not (SYSTEM_ETC / "inn.conf").exists():
        raise InnNotInstalled(f"{INSTALL_HINT} Missing: {', '.join(missing) or 'inn.conf'}")
    try:
        pwd.getpwnam("news")
    except KeyError as exc:
        raise InnNotInstalled(f"{INSTALL_HINT} (no user 'news')") from exc


@dataclass
class PostResult:
    """How a batch of articles fared; innd answers 239 (taken) or 439 (refused) per article."""

    accepted: int = 0
    refused: dict[str, str] = field(default_factory=dict)  # message-id -> innd's reason
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.accepted / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class OverviewLine:
    """One OVER line; fields follow the default overview.fmt of RFC 3977."""

    number: int
    subject: str
    from_: str
    date: str
    message_id: str
    references: str
    bytes: int
    lines: int
    extra: tuple[str, ...]

    @classmethod
    def parse(cls, raw: bytes) -> OverviewLine:
        fields = raw.decode("utf-8", "replace").split("\t")
        fields += [""] * (8 - len(fields))
        return cls(
            number=int(fields[0]),
            subject=fields[1],
            from_=fields[2],
            date=fields[3],
            message_id=fields[4],
            references=fields[5],
            bytes=int(fields[6] or 0),
            lines=int(fields[7] or 0),
            extra=tuple(fields[8:]),
        )


class NntpError(InnError):
    def __init__(self, code: int, text: str, command: str) -> None:
        super().__init__(f"{command!r} answered {code} {text}")
        self.code = code
        self.text = text


class NntpClient:
    """A minimal NNTP client: enough for a test to ask what a server really serves.

    The project's own client lives in indexer; this one stays small on purpose so a
    test failure points at the server, not at client code under test.
    """

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self._buffer = bytearray()
        self._inflate: zlib._Decompress | None = None
        self._deflate: zlib._Compress | None = None
        self.compressed = False
        code, text = self.read_status()
        if code not in (200, 201):
            raise NntpError(code, text, "<greeting>")
        self.greeting = text

    def __enter__(self) -> NntpClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send_line("QUIT")
            self.read_status()
        except OSError:
            pass
        self.sock.close()

    # -- wire -----------------------------------------------------------------
    def send(self, data: bytes) -> None:
        if self._deflate is not None:
            # RFC 8054: each write is flushed so the server can act on the command.
            data = self._deflate.compress(data) + self._deflate.flush(zlib.Z_SYNC_FLUSH)
        self.sock.sendall(data)

    def send_line(self, line: str) -> None:
        self.send(line.encode("utf-8") + b"\r\n")

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise InnError("server closed the connection")
        if self._inflate is not None:
            chunk = self._inflate.decompress(chunk)
        self._buffer += chunk

    def read_line(self) -> bytes:
        while True:
            end = self._buffer.find(b"\r\n")
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 2]
                return line
            self._fill()

    def read_status(self) -> tuple[int, str]:
        line = self.read_line().decode("utf-8", "replace")
        return int(line[:3]), line[4:]

    def read_block(self) -> list[bytes]:
        lines = []
        while True:
            line = self.read_line()
            if line == b".":
                return lines
            lines.append(line[1:] if line.startswith(b"..") else line)

    def command(self, line: str, expect: Iterable[int] = ()) -> tuple[int, str]:
        self.send_line(line)
        code, text = self.read_status()
        wanted = tuple(expect)
        if wanted and code not in wanted:
            raise NntpError(code, text, line)
        return code, text

    # -- commands -------------------------------------------------------------
    def capabilities(self) -> list[str]:
        self.command("CAPABILITIES", expect=(101,))
        return [line.decode() for line in self.read_block()]

    def mode_reader(self) -> tuple[int, str]:
        return self.command("MODE READER", expect=(200, 201))

    def group(self, name: str) -> GroupInfo:
        _, text = self.command(f"GROUP {name}", expect=(211,))
        count, first, last, group = text.split()[:4]
        return GroupInfo(int(count), int(first), int(last), group)

    def over(self, first: int, last: int | None = None) -> list[OverviewLine]:
        span = f"{first}-" if last is None else f"{first}-{last}"
        code, _ = self.command(f"OVER {span}", expect=(224, 423))
        if code == 423:  # no articles in that range
            return []
        return [OverviewLine.parse(line) for line in self.read_block()]

    def stat(self, spec: str | int) -> tuple[int, str]:
        return self.command(f"STAT {spec}")

    def compress_deflate(self) -> tuple[int, str]:
        """Send COMPRESS DEFLATE; on 206 everything after is raw deflate both ways."""
        code, text = self.command("COMPRESS DEFLATE")
        if code == 206:
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            self._deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
            # Bytes read after the 206 line are already compressed.
            pending, self._buffer = bytes(self._buffer), bytearray()
            if pending:
                self._buffer += self._inflate.decompress(pending)
            self.compressed = True
        return code, text


class InnServer:
    """A private INN instance under a temporary directory.

    innd takes the feed (TAKETHIS/IHAVE from 127.0.0.1) on `feed_port`; a standalone
    nnrpd serves readers on `port`, so a reader never lands on innd's feeder side
    because 127.0.0.1 is also a peer.
    """

    def __init__(self, *, keep: bool = False, start_timeout: float = 20.0) -> None:
        check_installed()
        self.keep = keep  # leave the directory behind for post-mortems
        self.start_timeout = start_timeout
        self.host = LOOPBACK
        self.port = 0
        self.feed_port = 0
        self.root: Path | None = None
        self._innd: subprocess.Popen[bytes] | None = None
        self._nnrpd: subprocess.Popen[bytes] | None = None
        # innd refuses to run as anyone but news (it checks before reading inn.conf,
        # so runasuser cannot change that). Root drops to news; any other user runs
        # INN as themselves in a user namespace that maps them to news (`unshare`,
        # no privilege needed): `make test` works for a non-root user.
        self._news = pwd.getpwnam("news")
        self._namespace: list[str] = []
        if os.geteuid() not in (0, self._news.pw_uid):
            self._namespace = user_namespace_as(self._news)

    @property
    def url(self) -> str:
        return f"nntp://{self.host}:{self.port}"

    @property
    def inn_conf(self) -> Path:
        assert self.root is not None, "server not started"
        return self.root / "etc" / "inn.conf"

    def __enter__(self) -> InnServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- lifecycle ------------------------------------------------------------
    def start(self) -> None:
        if self._innd is not None:
            return
        self.root = Path(tempfile.mkdtemp(prefix="inn2-test-"))
        try:
            self.port, self.feed_port = free_port(), free_port()
            while self.feed_port == self.port:
                self.feed_port = free_port()
            self._build_instance()
            self._start_innd()
            self._start_nnrpd()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self._innd is not None and self._innd.poll() is None:
            try:
                # A clean shutdown flushes history and overview; signals follow anyway.
                self._ctlinnd("shutdown", "tests done", check=False, timeout=10)
            except subprocess.TimeoutExpired:
                pass
        for process in (self._nnrpd, self._innd):
            _end_process_group(process)
        self._innd = self._nnrpd = None
        if self.root is not None and not self.keep:
            shutil.rmtree(self.root, ignore_errors=True)
            self.root = None

    # -- instance -------------------------------------------------------------
    def _build_instance(self) -> None:
        assert self.root is not None
        root = self.root
        dirs = {
            "pathdb": root / "db",
            "pathetc": root / "etc",
            "pathrun": root / "run",
            "pathlog": root / "log",
            "pathtmp": root / "tmp",
            "pathspool": root / "spool",
            "patharticles": root / "spool" / "articles",
            "pathoverview": root / "spool" / "overview",
            "pathincoming": root / "spool" / "incoming",
            "pathoutgoing": root / "spool" / "outgoing",
            "patharchive": root / "spool" / "archive",
            "pathhttp": root / "http",
        }
        for path in dirs.values():
            path.mkdir(parents=True, exist_ok=True)
        (root / "log" / "OLD").mkdir()
        # Start from the packaged configuration (control.ctl, expire.ctl, ...) and
        # replace what decides behaviour here.
        # A user other than root or news cannot read the files holding secrets
        # (incoming.conf, passwd.nntp, inn-secrets.conf): they are written below or unused.
        for source in SYSTEM_ETC.iterdir():
            if source.is_file() and os.access(source, os.R_OK):
                shutil.copy(source, dirs["pathetc"] / source.name)
        settings = {
            **{key: str(path) for key, path in dirs.items()},
            "domain": "inn2.test",
            "pathhost": "inn2-test.invalid",
            "organization": '"INN2 test harness"',
            "port": str(self.feed_port),
            "bindaddress": LOOPBACK,
            "nnrpdpostport": str(self.feed_port),
            # Backdated articles: with the default (10 days) innd refuses old posts.
            "artcutoff": "0",
            "ovmethod": "tradindexed",
            "enableoverview": "true",
            "useoverchan": "false",
            "noreader": "true",  # readers go to our nnrpd; innd only takes the feed
            "readerswhenstopped": "false",
            "docancels": "all",
            "pgpverify": "false",
            "doinnwatch": "false",
            "logipaddr": "true",
            "status": "0",
            "timer": "0",
            "hiscachesize": "1024",
            "wipcheck": "0",
            "maxartsize": "0",
            "localmaxartsize": "0",
            "nnrpdloadlimit": "0",
            "nnrpdcheckart": "true",
            "icdsynccount": "1",  # write active after every article, for readers
            "maxforks": "10",
            "rlimitnofile": "-1",
            "mta": '"/bin/true %s"',
        }
        (dirs["pathetc"] / "inn.conf").write_text(
            _merge_conf((SYSTEM_ETC / "inn.conf").read_text(), settings)
        )
        etc = dirs["pathetc"]
        (etc / "storage.conf").write_text(
            "method tradspool {\n    newsgroups: *\n    class: 0\n}\n"
        )
        (etc / "incoming.conf").write_text(
            "streaming: true\nmax-connections: 16\n"
            f'peer tests {{\n    hostname: "{LOOPBACK}"\n    streaming: true\n}}\n'
        )
        # No outgoing feeds and no controlchan: groups come from ctlinnd newgroup and
        # cancels from ctlinnd cancel, so no helper processes are left to chase.
        (etc / "newsfeeds").write_text("ME:*::\n")
        (etc / "readers.conf").write_text(
            'auth "loopback" {\n'
            f'    hosts: "{LOOPBACK}, localhost"\n'
            '    default: "<tests>"\n'
            "}\n"
            'access "loopback" {\n'
            '    users: "<tests>"\n'
            '    newsgroups: "*"\n'
            "    access: RPA\n"
            "    addcanlockuser: none\n"
            "}\n"
        )
        (etc / "expire.ctl").write_text("/remember/:0\n*:A:never:never:never\n")
        db = dirs["pathdb"]
        shutil.copy(EXAMPLES / "active", db / "active")
        shutil.copy(EXAMPLES / "newsgroups", db / "newsgroups")
        for name in ("active.times", "history"):
            (db / name).touch()
        if os.geteuid() == 0:
            _chown_tree(root, self._news.pw_uid, self._news.pw_gid)
        self._run_as_news([str(INN_BIN / "makedbz"), "-i", "-o", "-s", "100000"], cwd=db)

    def _env(self) -> dict[str, str]:
        return {
            "PATH": f"{INN_BIN}:/usr/bin:/bin:/usr/sbin:/sbin",
            "INNCONF": str(self.inn_conf),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
        }

    def _as_news(self) -> dict[str, Any]:
        """Popen arguments that drop root to news (nothing to do for anyone else)."""
        if os.geteuid() != 0:
            return {}
        return {"user": self._news.pw_uid, "group": self._news.pw_gid, "extra_groups": []}

    def _run_as_news(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        timeout: float = 30,
        check: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [*self._namespace, *argv],
            cwd=cwd or self.root,
            env=self._env(),
            **self._as_news(),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise InnError(
                f"{' '.join(argv)} failed ({result.returncode}): "
                f"{result.stdout.strip()} {result.stderr.strip()}"
            )
        return result

    def _spawn(self, argv: Sequence[str], log_name: str) -> subprocess.Popen[bytes]:
        assert self.root is not None
        log = open(self.root / "log" / log_name, "ab")  # the child keeps its own copy
        try:
            return subprocess.Popen(
                [*self._namespace, *argv],
                cwd=self.root,
                env=self._env(),
                **self._as_news(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                # Own process group: stop() ends innd, nnrpd and whatever they forked.
                start_new_session=True,
            )
        finally:
            log.close()

    def _start_innd(self) -> None:
        # -f stays in the foreground (we own the process), -N disables the packaged
        # Perl/Python filters, -c 0 repeats artcutoff: 0 for good measure.
        self._innd = self._spawn([str(INN_BIN / "innd"), "-f", "-N", "-c", "0"], "innd.out")
        self._wait_for_port(self.feed_port, self._innd, "innd")
        # innd answers on the socket before the control channel is ready.
        deadline = time.monotonic() + self.start_timeout
        while self._ctlinnd("mode", check=False).returncode != 0:
            if time.monotonic() > deadline:
                raise InnError(f"ctlinnd cannot reach innd; log:\n{self.log_tail()}")
            time.sleep(0.1)

    def _start_nnrpd(self) -> None:
        argv = [str(INN_BIN / "nnrpd"), "-D", "-f", "-n", "-b", LOOPBACK, "-p", str(self.port)]
        self._nnrpd = self._spawn(argv, "nnrpd.out")
        self._wait_for_port(self.port, self._nnrpd, "nnrpd")

    def _wait_for_port(self, port: int, process: subprocess.Popen[bytes], name: str) -> None:
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise InnError(f"{name} exited with {process.returncode}; log:\n{self.log_tail()}")
            try:
                with socket.create_connection((self.host, port), timeout=1) as probe:
                    if probe.recv(512)[:1] == b"2":
                        return
            except OSError:
                time.sleep(0.05)
        raise InnError(f"{name} did not answer on {self.host}:{port}; log:\n{self.log_tail()}")

    def log_tail(self, lines: int = 40) -> str:
        """The end of innd's and nnrpd's own logs, for error messages."""
        if self.root is None:
            return ""
        out = []
        for path in sorted((self.root / "log").glob("*")):
            if path.is_file() and path.stat().st_size:
                text = path.read_text(errors="replace").splitlines()[-lines:]
                out.append(f"== {path.name}\n" + "\n".join(text))
        return "\n".join(out)

    # -- operations -----------------------------------------------------------
    def _ctlinnd(
        self, *args: str, check: bool = True, timeout: float = 30
    ) -> subprocess.CompletedProcess[str]:
        return self._run_as_news(
            [str(INN_BIN / "ctlinnd"), "-s", "-t", "10", *args], timeout=timeout, check=check
        )

    def ctlinnd(self, *args: str) -> str:
        """Run ctlinnd against this instance (INNCONF points at its inn.conf)."""
        return self._ctlinnd(*args).stdout

    def create_group(self, name: str, flag: str = "y") -> None:
        self._ctlinnd("newgroup", name, flag, "tests")

    def cancel(self, message_id: str) -> None:
        """Remove an article from spool and overview; its number becomes a hole."""
        self._ctlinnd("cancel", message_id)

    def post_articles(
        self,
        groups: str | Sequence[str] | None,
        articles: Iterable[Article],
        *,
        batch: int = 200,
    ) -> PostResult:
        """Feed `articles` to innd with TAKETHIS, keeping their own Date and Message-ID.

        `groups` replaces each article's Newsgroups (None keeps the article's own).
        Commands are pipelined `batch` at a time, then the answers are read, so the
        socket buffers never fill up on both sides at once.
        """
        if groups is not None:
            targets = (groups,) if isinstance(groups, str) else tuple(groups)
            articles = (article.with_newsgroups(targets) for article in articles)
        result = PostResult()
        started = time.perf_counter()
        with NntpClient(self.host, self.feed_port) as feed:
            feed.command("MODE STREAM", expect=(203,))
            pending: list[str] = []

            def drain() -> None:
                for message_id in pending:
                    code, text = feed.read_status()
                    if code == 239:
                        result.accepted += 1
                    else:
                        result.refused[message_id] = f"{code} {text}"
                pending.clear()

            chunk = bytearray()
            for article in articles:
                chunk += f"TAKETHIS {article.message_id}\r\n".encode()
                chunk += article.to_wire() + b".\r\n"
                pending.append(article.message_id)
                if len(pending) >= batch:
                    feed.send(bytes(chunk))
                    chunk.clear()
                    drain()
            if pending:
                feed.send(bytes(chunk))
                drain()
        result.seconds = time.perf_counter() - started
        return result

    def reader(self, timeout: float = 30.0) -> NntpClient:
        """A fresh reader connection to this server's nnrpd."""
        return NntpClient(self.host, self.port, timeout=timeout)

    def article_numbers(self, group: str) -> dict[str, int]:
        """Message-id -> article number in `group`, as OVER reports them."""
        with self.reader() as client:
            info = client.group(group)
            if info.count == 0:
                return {}
            return {line.message_id: line.number for line in client.over(info.first, info.last)}


def _merge_conf(text: str, settings: dict[str, str]) -> str:
    """inn.conf with `settings` replacing the same keys; unknown keys are appended."""
    remaining = dict(settings)
    out = []
    for line in text.splitlines():
        match = re.match(r"^#?\s*([a-z0-9]+):", line)
        if match and match.group(1) in remaining:
            key = match.group(1)
            out.append(f"{key}: {remaining.pop(key)}")
        else:
            out.append(line)
    out.extend(f"{key}: {value}" for key, value in remaining.items())
    return "\n".join(out) + "\n"


def user_namespace_as(user: pwd.struct_passwd) -> list[str]:
    """The command prefix that runs a program as `user` inside a new user namespace."""
    unshare = shutil.which("unshare", path="/usr/bin:/bin")
    if unshare is None:
        raise InnError(
            "INN runs as news: as a user other than root, unshare (util-linux) is needed"
        )
    prefix = [unshare, "--user", f"--map-user={user.pw_uid}", f"--map-group={user.pw_gid}", "--"]
    probe = subprocess.run([*prefix, "true"], capture_output=True, text=True, timeout=10)
    if probe.returncode != 0:
        raise InnError(
            "INN runs as news: as a user other than root the harness maps you to news in a "
            f"user namespace, which this kernel refuses ({probe.stderr.strip()}); run as root"
        )
    return prefix


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for base, dirs, files in os.walk(root):
        for name in dirs + files:
            os.chown(os.path.join(base, name), uid, gid)


def _end_process_group(process: subprocess.Popen[bytes] | None, grace: float = 5.0) -> None:
    if process is None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, grace)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; its forked children (nnrpd per connection) may not be.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        break
