"""An agent's CPU per header on its reading path, one tree of the code beside another.

The real ``NNTPClient`` reads OVER from ``bench_agent``'s loopback block server
(next to no CPU), ``RangeReader`` and ``Window`` aggregate as a worker does, and
each batch is put in the columnar form and JSON-encoded in line, as the
reporter thread would: ``bench_e2e_index``'s headers (20-part files, a new
date each second), batches of 20,000. The figure is the reading thread's CPU
time over the headers, best of ``--passes`` per process; the garbage
collector is set as the tree's ``seed-node`` sets it. Each ``--tree`` (a
checkout or ``git archive`` of another commit; this one by default) runs in
a process of its own, alternating, ``--rounds`` times (docs/performance.md,
"The agent's CPU per header").

Run: ``.venv/bin/python bench/bench_reading_cpu.py [--tree /tmp/staging] [--tree .]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys, time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
root, count, passes, profile = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
sys.path[:0] = [root, root + "/bench"]
from bench_agent import FIRST_ARTICLE, GROUP, BlockNewsServer
from seed_node import assembly
from seed_node.aggregate import Window
from seed_node.control import Context, Control, Settings, Stats
from seed_node.leases import Lease
from seed_node.reading import RangeReader
from seed_node.sources import NewsServerSource
from usenet.batch_columns import columnar
from usenet.nntp import NewsServerConfig, NNTPPool
from usenet.rules import RuleSet

if hasattr(assembly, "collect_less_often"):
    assembly.collect_less_often()
start = datetime.now(UTC) - timedelta(days=5)
lines = []
for number in range(count):
    file_no, part = divmod(number, 20)
    subject = f'[{file_no}/9999] - "release{file_no}.part.rar" yEnc ({part + 1}/20)'
    fields = [str(FIRST_ARTICLE + number), subject, f"poster{file_no % 37}@example.com",
              format_datetime(start + timedelta(seconds=number)), f"<bench.{number}@e2e.example>",
              "", str(300 + number % 50), "3", f"Xref: bench {GROUP}:{FIRST_ARTICLE + number}"]
    lines.append("\\t".join(fields).encode())


class Encoding:
    def submit(self, lease, body):
        wire = {**body, "files": columnar(body["files"]), "fragments": columnar(body["fragments"])}
        json.dumps(wire, separators=(",", ":")).encode()

    def flush(self):
        pass


news = BlockNewsServer(lines)
config = NewsServerConfig.from_url(f"nntp://127.0.0.1:{news.port}/?connections=1")
source = NewsServerSource(NNTPPool(config))


def run():
    lease = Lease(id=1, group=GROUP, start=FIRST_ARTICLE, end=FIRST_ARTICLE + count - 1, epoch=1)
    context = Context(source, Settings(batch_headers=20_000, batch_seconds=3600), Control(), Stats())
    reader = RangeReader(lease, Window(RuleSet.default(), GROUP), Encoding(), context, carry=False)
    reader.read()
    reader.report(final=True)


run()  # warm: the server's blocks, the caches
if profile:
    import cProfile, pstats
    profiler = cProfile.Profile()
    profiler.runcall(run)
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
best = min(
    (lambda started: (run(), time.thread_time() - started)[1])(time.thread_time())
    for _ in range(passes)
)
print(f"{best / count * 1e6:.2f}")
"""


def measure(tree: Path, headers: int, passes: int, profile: bool = False) -> float:
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            CHILD,
            str(tree),
            str(headers),
            str(passes),
            "1" if profile else "0",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    assert result.returncode == 0, result.stderr
    if profile:
        print(result.stdout.rsplit("\n", 2)[0])
    return float(result.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, action="append", help="a tree of the code (repeat)")
    parser.add_argument("--headers", type=int, default=200_000)
    parser.add_argument("--passes", type=int, default=3, help="best of this many per process")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="cProfile the first tree once")
    args = parser.parse_args()
    trees = [tree.resolve() for tree in args.tree or [ROOT]]
    if args.profile:
        measure(trees[0], args.headers, 1, profile=True)
    print(
        f"reading-thread CPU per header, µs: {args.headers:,} headers a pass, best of "
        f"{args.passes} passes per process, {args.rounds} rounds (ratio to the first tree)"
    )
    print(f"| round | load average | {' | '.join(str(tree) for tree in trees)} |")
    print("|---|---|" + "---:|" * len(trees))
    for round_ in range(1, args.rounds + 1):
        load = f"{os.getloadavg()[0]:.1f}"
        figures = [measure(tree, args.headers, args.passes) for tree in trees]
        cells = [f"{figures[0]:.2f} µs"] + [
            f"{figure:.2f} µs ({figure / figures[0]:.2f})" for figure in figures[1:]
        ]
        print(f"| {round_} | {load} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
