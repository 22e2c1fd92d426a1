"""Throughput of the seed node agent's fetch -> parse -> aggregate -> batch path.

Bare parse + aggregate beside the agent's reader fed from memory and from the
in-repo NNTP server (docs/performance.md, "The node agent's pipeline").

Run: ``.venv/bin/python bench/bench_agent.py [--lines 300000]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_aggregate import GROUP, bench_window, generate_lines  # noqa: E402

from seed_node.aggregate import Window  # noqa: E402
from seed_node.control import Control, Settings, Stats  # noqa: E402
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
from tests.nntpd import Article, NNTPServer
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
    reader = RangeReader(
        lease,
        Window(RuleSet.default(), GROUP),
        source,
        reporter,  # type: ignore[arg-type]
        settings,
        Control(),
        Stats(),
        carry=False,
    )
    start = time.perf_counter()
    reader.read()
    reader.report(final=True)
    return time.perf_counter() - start, reporter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--batch-headers", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    args = parser.parse_args()

    lines = generate_lines(args.lines)
    print(f"{len(lines):,} overview lines, {sum(map(len, lines)) / len(lines):.0f} bytes each")
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
