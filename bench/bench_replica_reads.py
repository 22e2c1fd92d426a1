"""newznab search rate with reads on a streaming replica, beside reads on the primary.

A Patroni cluster of two members (tests/support/patroni.py: one etcd, a
primary and its synchronous standby, Debian's PostgreSQL) holds N releases of
bench_search's scene-like names. The same searches (bench_search's middling,
rare and two-word kinds, through newznab.selectors.search, which the API
calls) run for a fixed time from T threads in four phases of one run:

  primary   every search on the primary (DATABASE_URL): the baseline;
  replica   every search on the standby (DATABASE_REPLICA_URL);
  routed    every search through core.replicas.read_tolerating_lag, the API's
            path (the lag measured against the primary, at most once a second);
  beside    half the threads on the primary, half on the replica at once.

The phases take turns for --rounds rounds; each prints its median searches
per second and its ratio to the baseline's. On one small
machine both servers share its cores, so the ratios show what the routing
costs and that the standby carries the reads, not what a second machine adds.

Run: .venv/bin/python bench/bench_replica_reads.py [--releases 200000] [--seconds 10] [--threads 4] [--rounds 3]
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LOG_LEVEL", "WARNING")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from common import size_parser  # noqa: E402

from tests.support.patroni import PatroniCluster  # noqa: E402


def main() -> None:
    parser = size_parser(__doc__ or "", releases=200_000, seconds=10, threads=4, rounds=3)
    args = parser.parse_args()
    with PatroniCluster(members=2) as cluster:
        cluster.wait_for_leader()
        standby = cluster.wait_for_sync_standby()
        os.environ["DATABASE_URL"] = cluster.database_url()
        os.environ["DATABASE_REPLICA_URL"] = cluster.replica_url(standby)
        import bench_search  # sets Django up on the cluster and migrates it

        words = bench_search.vocabulary()
        print(f"loading {args.releases:,} releases on the primary ...")
        bench_search.load(args.releases, words)
        wait_for_replay()
        run(words, args.seconds, args.threads, args.rounds)


def wait_for_replay(timeout: float = 600) -> None:
    from core.replicas import replica_state

    deadline = time.monotonic() + timeout
    while (state := replica_state()).lag_seconds is None or state.lag_seconds > 1:
        if time.monotonic() > deadline:
            raise SystemExit(f"the standby did not catch up: {state}")
        time.sleep(0.5)
    print(f"the standby has replayed the load (lag {state.lag_seconds:.2f} s)")


def run(words: list[str], seconds: int, threads: int, rounds: int = 3) -> None:
    from bench_search import cases

    from core.replicas import PRIMARY, REPLICA, read_tolerating_lag
    from newznab.selectors import SearchQuery, search

    kinds = [make for name, make in cases(words).items() if "common" not in name]

    def on(alias: str) -> Callable[[SearchQuery], object]:
        return lambda query: search(query, using=alias)

    def routed(query: SearchQuery) -> object:
        return read_tolerating_lag(lambda using: search(query, using=using))

    for alias in (PRIMARY, REPLICA):  # warm both servers' caches and the plans
        rate(kinds, [on(alias)] * threads, 2)
    half = threads // 2 or 1
    phases = {
        "primary": [on(PRIMARY)] * threads,
        "replica": [on(REPLICA)] * threads,
        "routed": [routed] * threads,
        "beside": [on(PRIMARY)] * half + [on(REPLICA)] * (threads - half or 1),
    }
    print(f"{threads} threads, {seconds} s a phase, {rounds} rounds in turn (median)")
    rates: dict[str, list[float]] = {name: [] for name in phases}
    for _ in range(rounds):  # in turn, so a busy moment of the machine hits every phase
        for name, searchers in phases.items():
            rates[name].append(rate(kinds, searchers, seconds))
    baseline = statistics.median(rates["primary"])
    for name, measured in rates.items():
        per_second = statistics.median(measured)
        print(
            f"  {name:<8} {per_second:8.1f} searches/s   x{per_second / baseline:.2f}"
            f"   ({', '.join(f'{r:.0f}' for r in measured)})"
        )


def rate(kinds: list[Callable[[random.Random], object]], searchers: list, seconds: float) -> float:
    """Searches per second of `searchers` (one thread each) for `seconds`."""
    from django.db import connections

    counts = [0] * len(searchers)
    stop = time.monotonic() + seconds

    def work(index: int) -> None:
        rng = random.Random(index)
        try:
            while time.monotonic() < stop:
                searchers[index](rng.choice(kinds)(rng))
                counts[index] += 1
        finally:
            connections.close_all()

    workers = [threading.Thread(target=work, args=(i,)) for i in range(len(searchers))]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(counts) / (time.monotonic() - started)


if __name__ == "__main__":
    main()
