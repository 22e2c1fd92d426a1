"""A simulated fleet against a real `manage.py serve` (gunicorn) on PostgreSQL.

Per node count: the authenticated no-op (`GET /api/v1/ping`) as the baseline,
then the protocol's mix (leases, batches of yEnc-like files, heartbeats,
finishes, releases, lanes with `next` and snapshots), each for --seconds, and
the coordinator's CPU from /proc (gunicorn's tree, PostgreSQL's tree, and this
client). Then the realistic pace: every node pauses --think seconds after each
call. The simulator is simulator/fleet.py (also `manage.py
simulate_fleet --url …`). Method, goals and figures: docs/performance.md,
"Fleet simulator".

Run: .venv/bin/python bench/bench_fleet.py [--nodes 10 64 250] [--seconds 10]
     [--think 2] [--think-nodes 64 250] [--workers 3 --threads 8]
The big run: --nodes 10 64 250 1000 --think-nodes 64 250 1000 (windows grow with
the node count: at least nodes/15 seconds, after nodes/100 seconds of warm-up).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from common import load_groups, sql
from django_setup import ROOT, setup

DATABASE = "bench_fleet"
RANGE_SIZE = 1500  # 3 batches of 20 files of 25 segments
LOAD_RANGES = """
INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                        epoch, attempts, headers, files, fragments, error, created_at)
SELECT g.id, 1 + n * %(size)s, (n + 1) * %(size)s, 1 + n * %(size)s, 'queued', 100, false,
       0, 0, 0, 0, 0, '', now()
  FROM news_group g, generate_series(0, %(per_group)s - 1) AS n
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, nargs="+", default=[10, 64, 250])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each measured run")
    parser.add_argument("--think", type=float, default=2.0, help="pause after each call, paced")
    parser.add_argument("--think-nodes", type=int, nargs="*", default=[64, 250])
    parser.add_argument("--groups", type=int, default=400, help="more than the lane holders")
    parser.add_argument("--ranges-per-group", type=int, default=150)
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (WEB_WORKERS)")
    parser.add_argument("--threads", type=int, default=None, help="threads each (WEB_THREADS)")
    parser.add_argument("--timeout", type=float, default=60.0, help="a call's client timeout")
    parser.add_argument("--rounds", type=int, default=2, help="alternating windows per kind")
    parser.add_argument("--files", type=int, default=20, help="files per batch")
    parser.add_argument("--segments", type=int, default=25, help="segments per file")
    parser.add_argument(
        "--file-objects",
        action="store_true",
        help="batches as File objects, not the agent's columns",
    )
    return parser.parse_args()


def load(groups: int, ranges_per_group: int, nodes: int) -> list[str]:
    """Empty the coordinator's tables, plan the ranges, issue `nodes` tokens."""
    from indexer.services import issue_token

    sql("TRUNCATE news_group, seed_node, rate_bucket RESTART IDENTITY CASCADE")
    load_groups("alt.binaries.fleet.", groups)
    sql(LOAD_RANGES, {"size": RANGE_SIZE, "per_group": ranges_per_group})
    sql("VACUUM ANALYZE seed_range")
    tokens = [issue_token(f"sim-{i}")[1] for i in range(nodes)]
    from django.db import connection

    connection.close()
    return tokens


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(args: argparse.Namespace, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "EMBEDDED_DATABASE_NAME": DATABASE}
    if args.workers:
        env["WEB_WORKERS"] = str(args.workers)
    if args.threads:
        env["WEB_THREADS"] = str(args.threads)
    command = [sys.executable, "manage.py", "serve", "--no-migrate", "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).close()
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit("serve exited:\n" + log.read_text()[-3000:]) from None
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("serve did not come up:\n" + log.read_text()[-3000:])


def postmaster_pid() -> int:
    """The postmaster of this bench's own cluster (django_setup.setup(..., private=True)):
    its tree is the bench's PostgreSQL work and nobody else's."""
    from django.conf import settings

    data = Path(settings.DATABASES["default"].get("EMBEDDED_DIR", ""))
    pidfile = data / "postmaster.pid"
    if not pidfile.exists():
        raise SystemExit(
            "this bench reads PostgreSQL's CPU from /proc under the postmaster of a cluster of "
            "its own: run it without DATABASE_URL"
        )
    return int(pidfile.read_text().split()[0])


def measure(
    url: str, tokens: list[str], nodes: int, args: argparse.Namespace, meter: Any, **kw: Any
) -> tuple[Any, dict[str, float]]:
    """One window of `nodes` nodes; its stats and the cores each process tree used."""
    from simulator.fleet import Profile, run_blocking, run_fleet

    profile = Profile(
        think=kw.pop("think", 0.0), files=args.files, segments=args.segments,
        columns=not args.file_objects,
    )  # fmt: skip
    # Nodes start spread over a second or more, then the queue fills before the window
    # opens: with 1,000 nodes and no pause a call waits seconds in gunicorn's queue.
    ramp = min(5.0, 0.5 + nodes / 250) + nodes / 100
    seconds = max(args.seconds, nodes / 15)  # several calls per node in every window

    async def go() -> Any:
        task = asyncio.ensure_future(
            run_fleet(url, tokens, nodes, seconds, profile, timeout=args.timeout, ramp=ramp, **kw)
        )
        await asyncio.sleep(ramp)
        meter.start()  # the clock starts with the measured window, after the ramp
        return await task

    stats = run_blocking(go())
    return stats, meter.cores()


def interleaved(
    url: str, tokens: list[str], nodes: int, args: argparse.Namespace, meter: Any, kinds: list[str]
) -> dict[str, tuple[Any, dict[str, float]]]:
    """`args.rounds` windows of each kind, alternating (ping, mix, ping, mix …), so the
    machine's other load weighs on each alike; figures folded per kind."""
    folded: dict[str, tuple[Any, dict[str, float]]] = {}
    for _ in range(args.rounds):
        for kind in kinds:
            kw = {"ping": kind == "ping", "think": args.think if kind == "paced" else 0.0}
            stats, cores = measure(url, tokens, nodes, args, meter, **kw)
            if kind not in folded:
                folded[kind] = (stats, cores)
                continue
            total, seen = folded[kind]
            before = total.seconds
            total.add(stats)
            weight = stats.seconds / total.seconds
            seen = {k: seen[k] * before / total.seconds + cores[k] * weight for k in cores}
            folded[kind] = (total, seen)
    return folded


def goals(results: dict[tuple[str, int], Any], think: float) -> list[str]:
    """The three goals of docs/performance.md, "Fleet simulator": met or not, and by what."""
    lines = []
    mix = {n: s for (kind, n), s in results.items() if kind == "mix"}
    ping = {n: s for (kind, n), s in results.items() if kind == "ping"}
    if 64 in mix and 64 in ping:
        ratio = (mix[64].calls() / mix[64].seconds) / (ping[64].calls() / ping[64].seconds)
        verdict = "met" if ratio >= 0.6 else "NOT met"
        lines.append(f"64 nodes: mix calls/s ÷ ping calls/s = {ratio:.2f} (goal ≥ 0.6: {verdict})")
    high = {n: s.calls() / s.seconds for n, s in mix.items() if n >= 64}
    if len(high) > 1:
        peak = max(high.values())
        low = min(high.values())
        verdict = "met" if low >= 0.8 * peak else "NOT met"
        lines.append(
            f"64…{max(high)} nodes: lowest calls/s ÷ peak = {low / peak:.2f} (goal ≥ 0.8: {verdict})"
        )
    for (kind, n), stats in sorted(results.items()):
        if kind == "paced":
            kept = (stats.calls() / stats.seconds) / (n / think)
            lines.append(
                f"paced {n}: calls/s ÷ the pace asked for (nodes ÷ think) = {kept:.2f}; "
                f"{stats.segments / stats.seconds:,.0f} segments/s"
            )
    allowed = {"409", "429", "503"}
    bad = {
        f"{kind} {n}: {code}: {count}"
        for (kind, n), s in results.items()
        for code, count in s.errors().items()
        if code not in allowed
    }
    lines.append(
        "errors other than 409/429/503: "
        + ("none (goal met)" if not bad else ", ".join(sorted(bad)))
    )
    return lines


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the server on the way out
    setup(DATABASE, private=True)  # PostgreSQL's CPU is metered: a cluster of its own
    from simulator.fleet import (
        CPU_HEADER,
        ENDPOINT_HEADER,
        SUMMARY_HEADER,
        CpuMeter,
        endpoint_rows,
        summary_row,
        table,
    )

    tokens = load(args.groups, args.ranges_per_group, max(args.nodes + args.think_nodes))
    print(
        f"{args.groups} groups x {args.ranges_per_group} ranges of {RANGE_SIZE} articles; "
        f"batches of {args.files} files x {args.segments} segments "
        f"({'File objects' if args.file_objects else 'columnar, as the agent sends'}); "
        f"{args.rounds} rounds "
        f"of {args.seconds:g} s per kind, alternating",
        flush=True,
    )
    port = free_port()
    log = ROOT / "var" / "bench_fleet-serve.log"
    server = serve(args, port, log)
    url = f"http://127.0.0.1:{port}"
    meter = CpuMeter({"gunicorn": server.pid, "postgres": postmaster_pid(), "client": os.getpid()})
    results: dict[tuple[str, int], Any] = {}
    summary, endpoints = [], []
    plan = [(n, ["ping", "mix"]) for n in args.nodes] + [(n, ["paced"]) for n in args.think_nodes]
    try:
        for nodes, kinds in plan:
            for kind, (stats, cores) in interleaved(url, tokens, nodes, args, meter, kinds).items():
                results[(kind, nodes)] = stats
                label = f"{kind} {nodes}" + (
                    f" (think {args.think:g} s)" if kind == "paced" else ""
                )
                summary.append(summary_row(label, stats, cores))
                endpoints += endpoint_rows(label, stats)
                print(table([*SUMMARY_HEADER, *CPU_HEADER], summary[-1:]), flush=True)
    finally:
        server.terminate()
        server.wait(60)
    print()
    print(table([*SUMMARY_HEADER, *CPU_HEADER], summary))
    print()
    print(table(ENDPOINT_HEADER, endpoints))
    print()
    for line in goals(results, args.think):
        print(line)


if __name__ == "__main__":
    main()
