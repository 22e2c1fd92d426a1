"""Fleet throughput before, during and after a change of primary, on a Patroni cluster.

A two-member Patroni cluster in synchronous mode (tests/support/patroni.py, on
deploy/patroni's files) serves a real `manage.py serve` whose DATABASE_URL is
libpq's multi-host form; the fleet simulator (simulator/fleet.py, as
bench/bench_fleet.py runs it) drives it in consecutive windows:

- before: the cluster healthy;
- failover: the primary member lost whole (Patroni and PostgreSQL SIGKILLed) as
  the window opens; the synchronous standby is promoted after the leader key's
  TTL (deploy/patroni/patroni.yml: ttl 30);
- after failover: the new primary alone (the lost member rejoins after it);
- switchover: `patronictl switchover` back to the rejoined member as the window opens;
- after switchover.

Then, in the same run and on the same cluster, the newznab search rate with
reads on the primary, on the standby (DATABASE_REPLICA_URL), routed by the
lag check, and on both at once (bench/bench_replica_reads.py's `run`, over
--search-releases releases; 0 skips it).

Each window's acknowledged batches and successful calls per second are printed
as ratios to the "before" window of the same run, with the answers that were
not 2xx by code (503s are expected while there is no primary; a 500 is a bug).

Run: .venv/bin/python bench/bench_failover.py [--nodes 32] [--seconds 15]
     [--failover-seconds 40] [--switchover-seconds 15]
Needs Patroni and etcd (.ci/install-patroni). Figures: docs/reliability.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from bench_fleet import free_port, load, serve
from django_setup import ROOT, setup

DATABASE = "coordinator"  # the cluster's database (tests/support/patroni.py)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=15.0, help="each steady window")
    parser.add_argument(
        "--failover-seconds", type=float, default=40.0, help="the window the primary is lost in"
    )
    parser.add_argument(
        "--switchover-seconds", type=float, default=15.0, help="the switchover's window"
    )
    parser.add_argument("--groups", type=int, default=100)
    parser.add_argument("--ranges-per-group", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (WEB_WORKERS)")
    parser.add_argument("--threads", type=int, default=None, help="threads each (WEB_THREADS)")
    parser.add_argument("--timeout", type=float, default=30.0, help="a call's client timeout")
    parser.add_argument(
        "--search-releases", type=int, default=200_000, help="releases for the search rates"
    )
    parser.add_argument("--search-seconds", type=int, default=8, help="each search phase")
    parser.add_argument("--search-threads", type=int, default=4)
    return parser.parse_args()


def window(
    url: str,
    tokens: list[str],
    args: argparse.Namespace,
    seconds: float,
    at_start: Callable[[], Any],
) -> tuple[Any, float]:
    """One measured window of the fleet; `at_start` runs (in a thread) as it opens.
    Its stats, and the longest time in it during which no call succeeded."""
    import asyncio

    from simulator.fleet import Profile, Stats, run_blocking, run_fleet

    ramp = 1.0
    stats = Stats()

    def succeeded() -> int:
        return sum(n for (_, code), n in stats.answers.items() if code.startswith("2"))

    async def go() -> float:
        task = asyncio.ensure_future(
            run_fleet(
                url,
                tokens,
                args.nodes,
                seconds,
                Profile(),
                timeout=args.timeout,
                ramp=ramp,
                stats=stats,
            )
        )
        await asyncio.sleep(ramp)
        threading.Thread(target=at_start, daemon=True).start()
        last_success, count, longest = time.monotonic(), succeeded(), 0.0
        while not task.done():
            await asyncio.sleep(0.1)
            now, seen = time.monotonic(), succeeded()
            if seen > count:
                last_success, count = now, seen
            longest = max(longest, now - last_success)
        await task
        return longest

    longest = run_blocking(go())
    return stats, longest


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the servers on the way out
    sys.path.insert(0, str(ROOT))
    from tests.support.patroni import PatroniCluster

    with PatroniCluster(members=2) as cluster:
        os.environ["DATABASE_URL"] = cluster.database_url(connect_timeout=2)
        # The searches' replica: the synchronous standby, which is the standby again
        # after the switchover hands the primary back (bench_replica_reads.py).
        standby = cluster.wait_for_sync_standby()
        os.environ["DATABASE_REPLICA_URL"] = cluster.replica_url(standby)
        setup(DATABASE)
        from simulator.fleet import table

        tokens = load(args.groups, args.ranges_per_group, args.nodes)
        print(
            f"{args.nodes} simulated nodes; {args.groups} groups x {args.ranges_per_group} "
            f"ranges; a two-member Patroni cluster (synchronous mode), ttl 30 s",
            flush=True,
        )
        port = free_port()
        server = serve(args, port, ROOT / "var" / "bench_failover-serve.log")
        url = f"http://127.0.0.1:{port}"
        events: dict[str, float] = {}  # seconds each change of primary took
        lost: list[str] = []  # the member lost, brought back before the switchover

        def lose_primary() -> None:
            name = cluster.wait_for_leader()
            began = time.monotonic()
            cluster.kill_member(name)
            cluster.wait_for_leader(timeout=120, other_than=name)
            events["failover: seconds to a new primary"] = time.monotonic() - began
            lost.append(name)

        def switch_over() -> None:
            began = time.monotonic()
            old = cluster.wait_for_leader()
            cluster.patronictl("switchover", "--leader", old, "--candidate", lost[0], "--force")
            events["switchover: seconds until patronictl returned"] = time.monotonic() - began
            cluster.wait_for_leader(timeout=120, other_than=old)
            events["switchover: seconds to a new primary"] = time.monotonic() - began

        rows: list[list[Any]] = []
        before: Any = None
        try:
            phases: list[tuple[str, float, Callable[[], Any]]] = [
                ("before", args.seconds, lambda: None),
                ("failover", args.failover_seconds, lose_primary),
                ("after failover", args.seconds, lambda: None),
                ("switchover", args.switchover_seconds, switch_over),
                ("after switchover", args.seconds, lambda: None),
            ]
            for name, seconds, at_start in phases:
                if name == "switchover":  # the lost member back, as the standby
                    deadline = time.monotonic() + 120
                    while not lost and time.monotonic() < deadline:  # a failover past its window
                        time.sleep(0.2)
                    cluster.start_member(lost[0])
                    cluster.wait_for_replica(lost[0], timeout=120)
                    cluster.wait_for_sync_standby(timeout=60)
                stats, longest = window(url, tokens, args, seconds, at_start)
                before = before or stats
                rows.append(row(name, stats, before, longest))
                print(table(HEADER, rows[-1:]), flush=True)
        finally:
            server.terminate()
            server.wait(60)
        print()
        print(table(HEADER, rows))
        print()
        for label, value in events.items():
            print(f"{label}: {value:.1f}")
        if args.search_releases:
            search_rates(cluster, standby, args)


def search_rates(cluster: Any, standby: str, args: argparse.Namespace) -> None:
    """The newznab search rate on the primary and on the replica, after the windows."""
    import bench_replica_reads
    import bench_search

    cluster.wait_for_sync_standby(timeout=120)
    print(f"\nnewznab searches over {args.search_releases:,} releases (replica: {standby})")
    words = bench_search.vocabulary()
    bench_search.load(args.search_releases, words)
    bench_replica_reads.wait_for_replay()
    bench_replica_reads.run(words, args.search_seconds, args.search_threads)


HEADER = [
    "window",
    "seconds",
    "batches/s",
    "÷ before",
    "2xx calls/s",
    "÷ before",
    "longest with no 2xx (s)",
    "not 2xx",
]


def row(name: str, stats: Any, before: Any, longest: float) -> list[Any]:
    def ok(s: Any) -> float:
        return sum(n for (_, code), n in s.answers.items() if code.startswith("2")) / s.seconds

    batches, base_batches = stats.batches / stats.seconds, before.batches / before.seconds
    errors = ", ".join(f"{code}: {n}" for code, n in sorted(stats.errors().items())) or "none"
    return [
        name,
        f"{stats.seconds:.0f}",
        f"{batches:.1f}",
        f"{batches / base_batches:.2f}" if base_batches else "-",
        f"{ok(stats):.1f}",
        f"{ok(stats) / ok(before):.2f}" if ok(before) else "-",
        f"{longest:.1f}",
        errors,
    ]


if __name__ == "__main__":
    main()
