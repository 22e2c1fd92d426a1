"""Throughput of the seed node agent's fetch -> parse -> aggregate -> batch path.

Bare parse + aggregate beside the agent's reader fed from memory and from the
in-repo NNTP server; then the whole ``seed-node`` process (lease, OVER, parse,
aggregate, JSON batches over HTTP, finish) with one worker and with two worker
processes, against a loopback NNTP server and coordinator that cost next to no
CPU (docs/performance.md, "The node agent's pipeline" and "Worker processes").

Run: ``.venv/bin/python bench/bench_agent.py [--lines 300000] [--leases 8]``
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_aggregate import GROUP, bench_window, generate_lines  # noqa: E402

from seed_node.aggregate import Window  # noqa: E402
from seed_node.control import Context, Control, Settings, Stats  # noqa: E402
from seed_node.leases import Lease  # noqa: E402
from seed_node.reading import RangeReader  # noqa: E402
from seed_node.sources import NewsServerSource, RangeRef  # noqa: E402
from usenet.nntp import NewsServerConfig, NNTPPool  # noqa: E402
from usenet.rules import RuleSet  # noqa: E402

FIRST_ARTICLE = 1_000_000  # generate_lines numbers from here

SERVER = """
import sys
sys.path.insert(0, {bench!r}); sys.path.insert(0, {root!r})
from bench_aggregate import generate_lines
from tests.support.nntpd import Article, NNTPServer
articles = {{}}
for line in generate_lines({lines}):
    fields = line.rstrip(b"\\r\\n").decode().split("\\t")
    if len(fields) < 8:
        continue
    number, subject, poster, date, message_id, _, size, count = fields[:8]
    articles[int(number)] = Article(subject=subject, from_=poster, date=date,
        message_id=message_id, bytes=int(size), lines=int(count))
server = NNTPServer().start()
server.add_group({group!r}, articles)
print(server.port, flush=True)
sys.stdin.read()
"""


class ListSource:
    """Overview lines from memory: the agent's OverviewSource with no news server to wait on."""

    waited = 0.0  # seconds spent waiting for bytes: none, they are already here

    def __init__(self, lines: list[bytes]) -> None:
        self.lines_ = lines

    def lines(self, lease: RangeRef, first: int, last: int) -> Iterator[bytes]:
        return iter(self.lines_[first - FIRST_ARTICLE : last - FIRST_ARTICLE + 1])

    def close(self) -> None:
        pass


class EncodingReporter:
    """Stands in for the reporter thread: encodes each batch as it would go on the wire."""

    def __init__(self) -> None:
        self.batches = 0
        self.bytes = 0
        self.headers = 0

    def submit(self, lease: Lease, body: dict[str, Any]) -> None:
        self.batches += 1
        self.headers += body["headers"]
        self.bytes += len(json.dumps(body, separators=(",", ":")).encode())

    def flush(self) -> None:
        pass


def run_agent(source: Any, count: int, batch_headers: int) -> tuple[float, EncodingReporter]:
    lease = Lease(id=1, group=GROUP, start=FIRST_ARTICLE, end=FIRST_ARTICLE + count - 1, epoch=1)
    reporter = EncodingReporter()
    settings = Settings(batch_headers=batch_headers, batch_seconds=3600, fragment_lag=50_000)
    context = Context(source, settings, Control(), Stats())
    reader = RangeReader(
        lease,
        Window(RuleSet.default(), GROUP),
        reporter,
        context,
        carry=False,  # type: ignore[arg-type]
    )
    start = time.perf_counter()
    reader.read()
    reader.report(final=True)
    return time.perf_counter() - start, reporter


# --- worker processes: the real agent, one worker against two ---------------------

HEADERS = re.compile(rb'"headers":(\d+)')
NNTP_GREETING = b"200 bench news server ready\r\n"
CAPABILITIES = b"101 Capability list:\r\nVERSION 2\r\nREADER\r\nOVER\r\n.\r\n"


class BlockNewsServer:
    """A loopback NNTP server that answers OVER from pre-built blocks (next to no CPU).

    It serves the same ``lines`` for any lease of the group: each lease is the same
    articles under a new range id, so the agent's work grows with the lease count
    while the server's memory does not.
    """

    def __init__(self, lines: list[bytes]) -> None:
        self.wire = [
            (b"." + line if line.startswith(b".") else line).rstrip(b"\r\n") + b"\r\n"
            for line in lines
        ]
        self.blocks: dict[tuple[int, int], bytes] = {}
        self.lock = threading.Lock()
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def block(self, first: int, last: int) -> bytes:
        with self.lock:
            if (first, last) not in self.blocks:
                wanted = self.wire[max(0, first - FIRST_ARTICLE) : last - FIRST_ARTICLE + 1]
                self.blocks[first, last] = b"224 overview\r\n" + b"".join(wanted) + b".\r\n"
            return self.blocks[first, last]

    def _accept(self) -> None:
        while True:
            connection, _ = self.sock.accept()
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        last = FIRST_ARTICLE + len(self.wire) - 1
        with connection, connection.makefile("rb") as commands:
            connection.sendall(NNTP_GREETING)
            for raw in commands:
                words = raw.decode().split()
                verb = words[0].upper() if words else ""
                if verb == "CAPABILITIES":
                    connection.sendall(CAPABILITIES)
                elif verb == "GROUP":
                    answer = f"211 {len(self.wire)} {FIRST_ARTICLE} {last} {words[1]}\r\n"
                    connection.sendall(answer.encode())
                elif verb in ("OVER", "XOVER"):
                    first, _, end = words[1].partition("-")
                    connection.sendall(self.block(int(first), int(end or last)))
                elif verb == "QUIT":
                    connection.sendall(b"205 bye\r\n")
                    return
                else:
                    connection.sendall(b"500 what?\r\n")


class BenchCoordinator:
    """Hands out ``leases`` range leases of the same articles and takes every call.

    Records when the first lease went out and the last range was finished, and
    the headers the batches count: the agent's rate between those two moments.
    """

    def __init__(self, leases: int, articles: int, batch_delay: float = 0.0) -> None:
        self.leases, self.articles = leases, articles
        self.batch_delay = batch_delay  # seconds a batch's answer takes (a coordinator's work)
        self.handed = self.finished = self.headers = 0
        self.first_lease = self.last_finish = 0.0
        self.lock = threading.Lock()
        bench = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if bench.batch_delay and self.path.endswith("/batch"):
                    time.sleep(bench.batch_delay)
                data = json.dumps(bench.answer(self.path.removeprefix("/api/v1"), body)).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def answer(self, path: str, body: bytes) -> dict[str, Any]:
        with self.lock:
            if path == "/ranges/lease":
                if self.handed == self.leases:
                    return {"lease": None, "retry_after": None, "paused": None}
                self.handed += 1
                if self.handed == 1:
                    self.first_lease = time.perf_counter()
                end = FIRST_ARTICLE + self.articles - 1
                lease = {"id": self.handed, "group": GROUP, "start": FIRST_ARTICLE, "end": end}
                return {"lease": {**lease, "epoch": 1}, "retry_after": None, "paused": None}
            if path.endswith("/batch"):
                # Not json.loads: a batch is megabytes, and this process must stay idle.
                found = HEADERS.search(body[:200]) or HEADERS.search(body)
                assert found is not None
                self.headers += int(found[1])
                return {"next": 0, "stored": 0}
            if path.endswith("/finish"):
                self.finished += 1
                self.last_finish = time.perf_counter()
            return {}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def run_node(
    workers: int, lines: list[bytes], news: BlockNewsServer, leases: int, batch_delay: float = 0.0
) -> tuple[float, float]:
    """seed-node with ``workers`` workers through ``leases`` leases: lines/s, lines/CPU-s."""
    coordinator = BenchCoordinator(leases, len(lines), batch_delay)
    token = Path(tempfile.mkdtemp()) / "token"
    token.write_text("sn_bench\n")
    code = "import sys\nfrom seed_node.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    argv = [
        *("--coordinator", coordinator.url, "--token-file", str(token)),
        *("--news-server", f"nntp://127.0.0.1:{news.port}/?connections={workers}"),
        *("--workers", str(workers), "--exit-when-idle", "--batch-seconds", "3600"),
        *("--log-interval", "3600", "--log-level", "WARNING"),
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        result = subprocess.run(
            [sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        assert result.returncode == 0, result.stderr
        assert coordinator.finished == leases, result.stderr
        assert coordinator.headers == leases * len(lines), (coordinator.headers, result.stderr)
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        elapsed = coordinator.last_finish - coordinator.first_lease
        return coordinator.headers / elapsed, coordinator.headers / cpu
    finally:
        coordinator.close()


def bench_processes(lines: list[bytes], leases: int, repeat: int) -> None:
    news = BlockNewsServer(lines)
    runs: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
    for _ in range(repeat):  # interleaved, so that noise from other load hits both
        for workers in runs:
            runs[workers].append(run_node(workers, lines, news, leases))
    # The largest process the runs had (a worker; the parent of two holds no window).
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    one = max(rate for rate, _ in runs[1])
    print(
        f"\nseed-node processes, {leases} leases of {len(lines):,} articles "
        f"(loopback NNTP from pre-built blocks, coordinator in this process), best of {repeat}:"
    )
    print("| workers | lines/s (best) | all runs, lines/s | lines per CPU-second | x one worker |")
    print("|---|---:|---|---:|---:|")
    for workers, results in runs.items():
        best = max(rate for rate, _ in results)
        listed = ", ".join(f"{rate:,.0f}" for rate, _ in results)
        per_cpu = max(cpu for _, cpu in results)
        print(f"| {workers} | {best:,.0f} | {listed} | {per_cpu:,.0f} | {best / one:.2f}x |")
    print(f"peak RSS of a seed-node process: {peak:.0f} MB")


def bench_batch_latency(lines: list[bytes], leases: int, repeat: int, delay: float) -> None:
    """One worker through ranges of ``lines`` articles (one batch each, at the range's
    end), the coordinator answering batches at once (the baseline) or after ``delay``
    seconds, alternating: how much of a batch's answer the agent waits for."""
    news = BlockNewsServer(lines)
    runs: dict[float, list[float]] = {0.0: [], delay: []}
    for _ in range(repeat):
        for seconds in runs:
            runs[seconds].append(run_node(1, lines, news, leases, seconds)[0])
    instant, delayed = max(runs[0.0]), max(runs[delay])
    print(
        f"\nseed-node, one worker, {leases} ranges of {len(lines):,} articles (one batch each), "
        f"best of {repeat}:"
    )
    print(f"batches answered at once:          {instant:12,.0f} lines/s")
    print(f"batches answered after {delay:.2f} s:     {delayed:12,.0f} lines/s"
          f"  ({delayed / instant:.2f} of at once)")  # fmt: skip
    range_seconds = len(lines) / instant
    waited = len(lines) / delayed - range_seconds
    print(f"a range takes {range_seconds:.3f} s at once; each waits {waited:.3f} s "
          f"of the {delay:.2f} s answer ({waited / delay:.0%})")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--batch-headers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    parser.add_argument(
        "--leases", type=int, default=8, help="leases of --lines articles per seed-node run"
    )
    parser.add_argument(
        "--processes-only", action="store_true", help="only the one-against-two-workers table"
    )
    parser.add_argument(
        "--batch-delay",
        type=float,
        default=None,
        help="only the batch-latency table: batches answered after this many seconds",
    )
    args = parser.parse_args()
    if args.batch_delay is not None:
        lines = generate_lines(args.lines)
        bench_batch_latency(lines, args.leases, args.repeat, args.batch_delay)
        return

    lines = generate_lines(args.lines)
    print(f"{len(lines):,} overview lines, {sum(map(len, lines)) / len(lines):.0f} bytes each")
    if not args.processes_only:
        bench_in_process(lines, args)
    bench_processes(lines, args.leases, args.repeat)


def bench_in_process(lines: list[bytes], args: argparse.Namespace) -> None:
    bare = min(bench_window(lines)[0] for _ in range(args.repeat))
    memory = min(
        (run_agent(ListSource(lines), len(lines), args.batch_headers) for _ in range(args.repeat)),
        key=lambda run: run[0],
    )
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            SERVER.format(bench=str(ROOT / "bench"), root=str(ROOT), lines=args.lines, group=GROUP),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        config = NewsServerConfig.from_url(f"nntp://127.0.0.1:{port}/?connections=1")
        with NNTPPool(config) as pool:
            network = min(
                (
                    run_agent(NewsServerSource(pool), len(lines), args.batch_headers)
                    for _ in range(args.repeat)
                ),
                key=lambda run: run[0],
            )
    finally:
        server.terminate()
        server.wait()
    count = len(lines)
    print(f"bare parse + aggregate:                 {count / bare:12,.0f} lines/s")
    print(
        f"agent pipeline, lines from memory:      {count / memory[0]:12,.0f} lines/s"
        f"  ({memory[1].batches} batches, {memory[1].bytes / 1e6:.1f} MB of JSON)"
    )
    print(f"agent pipeline, from the NNTP server:   {count / network[0]:12,.0f} lines/s")
    served = sum(1 for line in lines if line.count(b"\t") >= 7)  # the server drops malformed
    assert memory[1].headers == count and network[1].headers == served


if __name__ == "__main__":
    main()
