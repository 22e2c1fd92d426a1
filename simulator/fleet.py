"""A simulated fleet of seed nodes speaking the node API (docs/api.md) over HTTP/1.1.

Each node is an asyncio task with one keep-alive connection of its own. It
leases ranges (or a lane, then ranges through the lane's `next`), reports
batches of generated yEnc-like files, heartbeats, finishes or releases, and
honours `Retry-After` and `retry_after` as the reference agent does; batches go
in the columnar form, as the agent sends them (`Profile.columns`). The standard
library and usenet's number reader only: `manage.py simulate_fleet` runs it against any coordinator,
`bench/bench_fleet.py` against a `manage.py serve` it starts. Figures and
method: docs/performance.md, "Fleet simulator".
"""

from __future__ import annotations

import asyncio
import gzip
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Coroutine, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from usenet.batch_columns import columnar
from usenet.numbers import ascii_digits, whole_number

T = TypeVar("T")

MAX_SLEEP = 30.0  # a node never waits longer than this at once (the run may end first)


class CallFailed(Exception):
    """A call that got no HTTP answer: a timeout or a broken connection."""

    def __init__(self, code: str) -> None:
        super().__init__(code)
        self.code = code


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None

    def retry_after(self, default: float = 5.0) -> float:
        try:
            return float(self.headers.get("retry-after", default))
        except ValueError:
            return default


class Connection:
    """One keep-alive HTTP/1.1 connection; reconnects when the server closed it."""

    def __init__(self, url: str, token: str, timeout: float) -> None:
        parts = urlsplit(url)
        self.host = parts.hostname or "127.0.0.1"
        self.port = parts.port or (443 if parts.scheme == "https" else 80)
        self.tls = parts.scheme == "https"
        self.prefix = parts.path.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(
        self, method: str, path: str, body: bytes = b"", content_type: str = "application/json"
    ) -> Answer:
        head = (
            f"{method} {self.prefix}{path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Authorization: Bearer {self.token}\r\nAccept: */*\r\n"
            f"Content-Length: {len(body)}\r\n"
        )
        if body:
            head += f"Content-Type: {content_type}\r\n"
        data = head.encode() + b"\r\n" + body
        for attempt in (1, 2):
            fresh = self.writer is None
            try:
                return await asyncio.wait_for(self._exchange(data), self.timeout)
            except TimeoutError:
                self.close()
                raise CallFailed("timeout") from None
            except (OSError, asyncio.IncompleteReadError, ValueError):
                self.close()
                # A kept-alive connection the server closed meanwhile: once more on a new one.
                if fresh or attempt == 2:
                    raise CallFailed("connection") from None
        raise CallFailed("connection")

    async def _exchange(self, data: bytes) -> Answer:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(
                self.host, self.port, ssl=True if self.tls else None
            )
        assert self.reader is not None
        self.writer.write(data)
        await self.writer.drain()
        status_line = await self.reader.readline()
        if not status_line:
            raise ValueError("closed")
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await self.reader.readline()) not in (b"\r\n", b"\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        body = await self._body(headers)
        if headers.get("connection", "").lower() == "close":
            self.close()
        return Answer(status, headers, body)

    async def _body(self, headers: dict[str, str]) -> bytes:
        assert self.reader is not None
        if "content-length" in headers:
            return await self.reader.readexactly(int(headers["content-length"]))
        if headers.get("transfer-encoding", "").lower() != "chunked":
            return b""
        chunks: list[bytes] = []
        while True:
            size = int((await self.reader.readline()).split(b";")[0], 16)
            chunk = await self.reader.readexactly(size + 2)
            if size == 0:
                return b"".join(chunks)
            chunks.append(chunk[:-2])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Stats:
    """What a run saw: latencies and answers per endpoint, work done, in how long."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    answers: Counter[tuple[str, str]] = field(default_factory=Counter)
    leases: int = 0
    batches: int = 0
    segments: int = 0
    stored: int = 0
    seconds: float = 1e-9  # the measured window (above 0: rates divide by it)

    def calls(self) -> int:
        return sum(self.answers.values())

    def add(self, other: Stats) -> None:
        """Fold another window's figures into these (interleaved rounds)."""
        for endpoint, values in other.latencies.items():
            self.latencies[endpoint].extend(values)
        self.answers.update(other.answers)
        self.leases += other.leases
        self.batches += other.batches
        self.segments += other.segments
        self.stored += other.stored
        self.seconds += other.seconds

    def errors(self) -> Counter[str]:
        """Answers outside 2xx, by code (e.g. "409", "503", "timeout"), all endpoints."""
        counted: Counter[str] = Counter()
        for (_endpoint, code), count in self.answers.items():
            if not code.startswith("2"):
                counted[code] += count
        return counted

    def percentile(self, endpoint: str, share: float) -> float:
        values = sorted(self.latencies.get(endpoint, ()))
        if not values:
            return float("nan")
        return values[min(len(values) - 1, int(share * len(values)))]


@dataclass(frozen=True)
class Profile:
    """How a simulated node behaves (the defaults resemble the reference agent)."""

    think: float = 0.0  # seconds a node pauses after each call (reading its news server)
    files: int = 20  # files per batch
    segments: int = 25  # segments per file
    batches_per_range: int = 3  # a range is covered in this many batches (at most)
    heartbeat_every: int = 2  # a range heartbeat after every this many batches
    lane_share: float = 0.1  # the share of nodes that hold a lane instead of ranges
    lane_ranges: int = 4  # ranges a lane holder reads before it releases its lane
    release_share: float = 0.05  # ranges released (queued again) instead of finished
    snapshot_bytes: int = 16_384
    # A batch's files in the columnar form, as the agent sends them (docs/api.md);
    # False: File objects, for a coordinator from before the columnar form.
    columns: bool = True


TITLES = (
    "Some.Show.S01E{ep:02d}.1080p.WEB.h264-GRP",
    "Another.Movie.{year}.2160p.UHD.BluRay.x265-TEAM",
    "Documentary.Series.S{ep:02d}E01.720p.HDTV.x264-CREW",
    "Linux.Distribution.{year}.x64.DVD-ISO",
    "Album.Artist-Title-{year}-FLAC-WEB",
)


def release_files(rng: random.Random, count: int) -> list[str]:
    """The file names of one post: rar volumes, then par2, then an nfo."""
    title = rng.choice(TITLES).format(ep=rng.randint(1, 24), year=rng.randint(1990, 2026))
    names = [f"{title}.part{n:02d}.rar" for n in range(1, max(count - 2, 1) + 1)]
    names += [f"{title}.vol00+01.par2", f"{title}.nfo"][: count - len(names)]
    return names[:count]


def make_files(
    node: str, rng: random.Random, first: int, profile: Profile
) -> tuple[list[dict[str, Any]], int]:
    """`profile.files` files with consecutive article numbers from `first`; (files, articles)."""
    names = release_files(rng, profile.files)
    poster = f"{node} <{node}@poster.example.org>"
    date = 1_700_000_000 + rng.randint(0, 50_000_000)
    host = f"powerpost.{rng.randint(1, 999)}.local"
    files, article = [], first
    for index, name in enumerate(names, start=1):
        total = profile.segments
        subject = f'[{index:02d}/{len(names):02d}] - "{name}" yEnc (1/{total})'
        segments = [
            [part, article + part - 1, f"<part{part}of{total}.{article}.{node}@{host}>", 739_811]
            for part in range(1, total + 1)
        ]
        article += total
        files.append(
            {
                "subject": subject,
                "poster": poster,
                "date": date,
                "total": total,
                "segments": segments,
            }
        )
    return files, article - first


def batch_body(
    files: list[dict[str, Any]], epoch: int, upto: int, articles: int, columns: bool
) -> dict[str, Any]:
    """A batch's body: the files, the last of them as a fragment (it may go on past
    this batch), in the columnar form the agent sends, or as File objects."""
    done, fragments = files[:-1], files[-1:]
    if columns:
        return {"epoch": epoch, "next": upto, "headers": articles,
                "files": columnar(done), "fragments": columnar(fragments)}  # fmt: skip
    return {"epoch": epoch, "next": upto, "headers": articles, "files": done,
            "fragments": fragments}  # fmt: skip


class Node:
    """One simulated seed node: a connection, a random stream, the shared stats."""

    def __init__(
        self,
        name: str,
        url: str,
        token: str,
        profile: Profile,
        stats: Stats,
        deadline: float,
        timeout: float,
    ) -> None:
        self.name = name
        self.conn = Connection(url, token, timeout)
        self.profile = profile
        self.stats = stats
        self.deadline = deadline
        self.rng = random.Random(name)
        self.held: dict[str, int] = {}  # path of the range or lane held -> its epoch
        self.lane_head: dict[str, Any] = {}  # the snapshot header of the lane held

    def running(self) -> bool:
        return time.monotonic() < self.deadline

    async def pause(self, seconds: float) -> None:
        remaining = self.deadline - time.monotonic()
        if remaining > 0 and seconds > 0:
            await asyncio.sleep(min(seconds, remaining, MAX_SLEEP))

    async def call(
        self,
        endpoint: str,
        method: str,
        path: str,
        body: Any = None,
        raw: bytes | None = None,
        content_type: str = "application/json",
    ) -> Answer | None:
        """One call, counted; None when it got no answer or waits were asked for
        (429, 503: the node sleeps Retry-After, as the agent does)."""
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        started = time.monotonic()
        try:
            answer = await self.conn.request(method, path, data, content_type)
        except CallFailed as failed:
            self.stats.answers[(endpoint, failed.code)] += 1
            await self.pause(1.0)
            return None
        self.stats.latencies[endpoint].append(time.monotonic() - started)
        self.stats.answers[(endpoint, str(answer.status))] += 1
        if answer.status in (429, 503):
            await self.pause(answer.retry_after())
            return None
        await self.pause(self.profile.think)
        return answer

    async def ping_loop(self) -> None:
        while self.running():
            await self.call("ping", "GET", "/api/v1/ping")

    async def work_loop(self) -> None:
        lane = self.rng.random() < self.profile.lane_share
        while self.running():
            if lane:
                await self.hold_lane()
            else:
                await self.lease_range()
        await self.stop()

    async def stop(self) -> None:
        """Hand back what is held, uncounted, as an agent does when it stops (else the
        leases stay live for LEASE_TTL_SECONDS and the next run finds them held)."""
        for path, epoch in reversed(list(self.held.items())):
            body = json.dumps({"epoch": epoch, "uncounted": True}).encode()
            try:
                await self.conn.request("POST", f"{path}/release", body)
            except CallFailed:
                pass
        self.held.clear()
        self.conn.close()

    async def take_lease(self, endpoint: str, path: str, body: Any = None) -> Any:
        """The lease offered at `path`, counted; None when there was none (after
        waiting its `retry_after`) or the call failed."""
        answer = await self.call(endpoint, "POST", path, body)
        if answer is None or answer.status != 200:
            return None
        offer = answer.json()
        if offer["lease"] is None:
            await self.pause(float(offer.get("retry_after") or 5))
            return None
        self.stats.leases += 1
        return offer["lease"]

    async def lease_range(self) -> None:
        lease = await self.take_lease("lease", "/api/v1/ranges/lease")
        if lease is None:
            return
        await self.read_range(lease["id"], lease["epoch"], lease["start"], lease["end"])

    async def read_range(self, range_id: int, epoch: int, start: int, end: int) -> bool:
        """Batches over start..end, heartbeats between, then finish (or release); False
        when the lease was lost."""
        path = f"/api/v1/ranges/{range_id}"
        self.held[path] = epoch
        span = max((end - start + 1) // self.profile.batches_per_range, 1)
        position = start
        for number in range(1, self.profile.batches_per_range + 1):
            if not self.running():
                return True
            last = number == self.profile.batches_per_range
            upto = end + 1 if last else min(position + span, end + 1)
            if not await self.batch(path, epoch, position, upto):
                self.held.pop(path, None)
                return False
            position = upto
            if number % self.profile.heartbeat_every == 0 and not last:
                await self.call("heartbeat", "POST", f"{path}/heartbeat", {"epoch": epoch})
        if self.rng.random() < self.profile.release_share:
            await self.call("release", "POST", f"{path}/release", {"epoch": epoch})
        else:
            await self.call("finish", "POST", f"{path}/finish", {"epoch": epoch})
        self.held.pop(path, None)
        return True

    async def batch(self, path: str, epoch: int, start: int, upto: int) -> bool:
        files, articles = make_files(self.name, self.rng, start, self.profile)
        body = batch_body(files, epoch, upto, articles, self.profile.columns)
        while self.running():
            answer = await self.call("batch", "POST", f"{path}/batch", body)
            if answer is None:
                continue  # told to wait, or no answer: the same batch again
            if answer.status != 200:
                return False
            self.stats.batches += 1
            self.stats.segments += sum(len(f["segments"]) for f in files)
            self.stats.stored += int(answer.json().get("stored", 0))
            return True
        return False

    async def hold_lane(self) -> None:
        lease = await self.take_lease("group_lease", "/api/v1/groups/lease", {"lane": "history"})
        if lease is None:
            return
        path = f"/api/v1/groups/{lease['group']['id']}/lanes/history"
        epoch = lease["epoch"]
        self.held[path] = epoch
        self.lane_head = {
            "format": 1,
            "group": lease["group"]["name"],
            "rules_version": lease["rules"]["version"],
            "max_open": 200_000,
            "counters": {},
        }
        if lease["snapshot"] is not None:
            await self.call("snapshot_get", "GET", f"{path}/snapshot?epoch={epoch}")
        for _ in range(self.profile.lane_ranges):
            if not self.running():
                return
            if not await self.lane_range(path, epoch):
                self.held.pop(path, None)  # caught up (released) or lost
                return
        await self.call("lane_release", "POST", f"{path}/release", {"epoch": epoch})
        self.held.pop(path, None)

    async def lane_range(self, path: str, epoch: int) -> bool:
        """The lane's next range read, its snapshot uploaded; False when the lane is
        caught up or lost."""
        answer = await self.call("lane_next", "POST", f"{path}/next", {"epoch": epoch})
        if answer is None or answer.status != 200:
            return False
        work = answer.json()["range"]
        if work is None:
            await self.call("lane_release", "POST", f"{path}/release", {"epoch": epoch})
            return False
        await self.call("lane_heartbeat", "POST", f"{path}/heartbeat", {"epoch": epoch})
        if not await self.read_range(work["id"], work["epoch"], work["next"], work["end"]):
            return False
        window = self.window_snapshot(work["start"], work["end"])
        query = f"?epoch={epoch}&next={work['end'] + 1}"
        answer = await self.call(
            "snapshot_put",
            "PUT",
            f"{path}/snapshot{query}",
            raw=window,
            content_type="application/gzip",
        )
        if answer is not None and answer.status == 204:
            return True
        # A snapshot the coordinator refused: give the lane back, as the agent does,
        # rather than leave it held (and its ranges unclaimable) until its TTL.
        await self.call("lane_release", "POST", f"{path}/release", {"epoch": epoch})
        return False

    def window_snapshot(self, start: int, end: int) -> bytes:
        """A window the coordinator takes (docs/api.md, the snapshot format): the
        lease's group and rules, open files of the range just read, about
        `snapshot_bytes` on the wire (random message-ids barely compress)."""
        lines = [json.dumps(self.lane_head).encode()]
        size, n = 0, 0
        while size < self.profile.snapshot_bytes:
            article = self.rng.randint(start, end)
            entry = {
                "subject": f'"sim-{n}.rar" yEnc (1/2)',
                "poster": "sim <sim@example.com>",
                "date": 1_700_000_000,
                "total": 2,
                "segments": [[1, article, f"<{self.rng.randbytes(24).hex()}@sim>", 500]],
            }
            lines.append(json.dumps(entry).encode())
            size += len(lines[-1]) // 2  # about what gzip leaves of it
            n += 1
        return gzip.compress(b"\n".join(lines) + b"\n", 1)


# --- running a fleet --------------------------------------------------------------


def raise_open_files(needed: int) -> None:
    """One socket per node: lift the soft limit on open files (often 1,024) toward the hard one."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, target), hard))


async def run_fleet(
    url: str,
    tokens: Sequence[str],
    nodes: int,
    seconds: float,
    profile: Profile,
    *,
    ping: bool = False,
    timeout: float = 60.0,
    ramp: float = 1.0,
    stats: Stats | None = None,
) -> Stats:
    """`nodes` nodes (tokens round-robin) for `seconds`; `ping` runs the no-op instead.
    Nodes start spread over `ramp` seconds; the clock starts when the last one has.
    `stats`, if given, is the one filled (a caller may watch it fill)."""
    raise_open_files(nodes + 64)
    stats = stats if stats is not None else Stats()
    start = time.monotonic() + ramp
    deadline = start + seconds
    fleet = [
        Node(f"sim-{i}", url, tokens[i % len(tokens)], profile, stats, deadline, timeout)
        for i in range(nodes)
    ]

    async def one(index: int, node: Node) -> None:
        await asyncio.sleep(ramp * index / max(nodes, 1))
        await (node.ping_loop() if ping else node.work_loop())

    tasks = [asyncio.create_task(one(i, node)) for i, node in enumerate(fleet)]
    await asyncio.sleep(max(start - time.monotonic(), 0))
    stats.answers.clear()  # the ramp's calls are not measured
    stats.latencies.clear()
    stats.leases = stats.batches = stats.segments = stats.stored = 0
    started = time.monotonic()
    await asyncio.gather(*tasks)
    stats.seconds = max(time.monotonic(), deadline) - started
    for node in fleet:
        node.conn.close()
    return stats


# --- CPU from /proc ---------------------------------------------------------------


def run_blocking(coroutine: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(coroutine)`, in a thread of its own when this thread already
    runs an event loop (a caller inside one, e.g. Playwright's sync API)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:  # gone meanwhile
        return 0
    # utime + stime, and cutime + cstime: the reaped children's (a backend that
    # exited leaves the tree, its time stays counted on its parent).
    return sum(whole_number(f) for f in fields[11:15])


def cpu_seconds(*roots: int) -> float:
    """CPU seconds so far of `roots`, every process below them, and the children
    they have reaped (/proc/PID/stat)."""
    import os

    return sum(_ticks(pid) for pid in process_tree(*roots)) / os.sysconf("SC_CLK_TCK")


def _machine_busy() -> int:
    """Busy ticks of every CPU since boot (/proc/stat: all but idle and iowait)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(f) for f in stat.readline().split()[1:]]
    except OSError:
        return 0
    return sum(fields[:8]) - fields[3] - fields[4]


def _children() -> dict[int, list[int]]:
    import os

    tree: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if ascii_digits(entry):
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree[parent].append(int(entry))
    return tree


def process_tree(*roots: int) -> list[int]:
    """`roots` and every process below them, each once."""
    tree, found, todo = _children(), set(), list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(tree.get(pid, ()))
    return sorted(found)


class CpuMeter:
    """CPU seconds used by process trees (gunicorn, PostgreSQL, this process) over a run."""

    def __init__(self, roots: dict[str, int]) -> None:
        import os

        self.roots = roots
        self.hz = os.sysconf("SC_CLK_TCK")
        self.before: dict[str, int] = {}
        self.started = 0.0

    def sample(self) -> dict[str, int]:
        # Workers come and go (restarts); each sample walks the trees again.
        ticks = {name: sum(_ticks(p) for p in process_tree(r)) for name, r in self.roots.items()}
        ticks["machine"] = _machine_busy()  # every process, other users' work included
        return ticks

    def start(self) -> None:
        self.before = self.sample()
        self.started = time.monotonic()

    def cores(self) -> dict[str, float]:
        """Cores used on average since start(), per tree (1.0 = one core all the time)."""
        wall = max(time.monotonic() - self.started, 1e-9)
        after = self.sample()
        return {k: (after[k] - self.before.get(k, 0)) / self.hz / wall for k in after}


# --- tables -----------------------------------------------------------------------

ENDPOINTS = (
    "ping", "lease", "batch", "heartbeat", "finish", "release", "group_lease", "lane_next",
    "lane_heartbeat", "snapshot_put", "snapshot_get", "lane_release",
)  # fmt: skip


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table, columns padded."""
    cells = [[str(c) for c in header]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def errors_text(stats: Stats) -> str:
    errors = stats.errors()
    return ", ".join(f"{code}: {n}" for code, n in sorted(errors.items())) or "none"


def ms(seconds: float) -> str:
    return "-" if seconds != seconds else f"{seconds * 1000:.0f}"  # NaN: no call


def summary_row(label: str, stats: Stats, cpu: dict[str, float] | None = None) -> list[Any]:
    s = stats.seconds
    main = "ping" if stats.latencies.get("ping") else "batch"
    row: list[Any] = [
        label,
        f"{stats.calls() / s:.0f}",
        f"{stats.leases / s:.1f}",
        f"{stats.batches / s:.1f}",
        f"{stats.segments / s:.0f}",
        "/".join(ms(stats.percentile(main, q)) for q in (0.5, 0.95, 0.99)),
        errors_text(stats),
    ]
    if cpu is not None:
        row.append(" ".join(f"{k} {v:.2f}" for k, v in cpu.items()))
        coordinator = cpu.get("gunicorn", 0.0) + cpu.get("postgres", 0.0)
        row.append(f"{coordinator * 1000 / max(stats.calls() / s, 1e-9):.1f}")
    return row


SUMMARY_HEADER = (
    "run", "calls/s", "leases/s", "batches/s", "segments/s", "p50/p95/p99 ms", "errors",
)  # fmt: skip
CPU_HEADER = ("cores used", "coordinator CPU ms/call")


def endpoint_rows(label: str, stats: Stats) -> list[list[Any]]:
    rows = []
    for endpoint in ENDPOINTS:
        count = len(stats.latencies.get(endpoint, ()))
        codes = {c: n for (e, c), n in stats.answers.items() if e == endpoint}
        if not count and not codes:
            continue
        answers = ", ".join(f"{c}: {n}" for c, n in sorted(codes.items()))
        rows.append(
            [label, endpoint, f"{count / stats.seconds:.1f}"]
            + [ms(stats.percentile(endpoint, q)) for q in (0.5, 0.95, 0.99)]
            + [answers]
        )
    return rows


ENDPOINT_HEADER = ("run", "endpoint", "calls/s", "p50 ms", "p95 ms", "p99 ms", "answers")
