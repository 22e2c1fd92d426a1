"""Range claims per second: the lease service beside the bare claim statement.

Baseline: the bare one-statement claim (UPDATE … SKIP LOCKED) on psycopg
connections, alternating with `seeding.services.lease_range` in the same run,
per queue size and connection count. Method and figures: docs/performance.md.

Run: .venv/bin/python bench/bench_lease.py [--sizes 10000 1000000] [--warmup 200000] [--seconds 8]
     .venv/bin/python bench/bench_lease.py --ranges 10000000   # archive scale: 10k beside 10M
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from common import load_groups, sql
from django_setup import drop_database, setup, use_database

BARE_CLAIM = """
UPDATE seed_range
   SET status = 'leased', node_id = %(node)s, epoch = epoch + 1, attempts = attempts + 1,
       leased_at = now(), heartbeat_at = now()
 WHERE id = (SELECT id FROM seed_range WHERE status = 'queued'
              ORDER BY priority, id LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING id, epoch
"""
BARE_FINISH_ALL = (
    "UPDATE seed_range SET status = 'done', done_at = now(), next_id = end_id + 1"
    " WHERE status = 'leased'"
)
REFILL = """
INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                        epoch, attempts, headers, files, fragments, error, created_at)
SELECT 1 + (n %% 100), n * 1000, n * 1000 + 999, n * 1000, 'queued', 100, false,
       0, 0, 0, 0, 0, '', now()
  FROM generate_series((SELECT coalesce(max(id), 0) + 1 FROM seed_range),
                       (SELECT coalesce(max(id), 0) FROM seed_range) + %s) AS n
"""

ROUND = 5000  # claims between refills of the queue
WARMUP_CONNECTIONS = 16

# A unit of work run on each connection: (connection index, stop event) ->
# claims made, 0 when the queue gave nothing.
Body = Callable[[int, Any], int]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument(
        "--ranges",
        type=int,
        help="archive scale: 10,000 and this many queued ranges (e.g. 10000000), each in a"
        " database of its own, their windows alternated (dropped at the end unless --keep)",
    )
    parser.add_argument("--keep", action="store_true", help="keep --ranges' databases")
    parser.add_argument("--no-load", action="store_true", help="reuse what --keep kept")
    parser.add_argument(
        "--warmup", type=int, default=200_000, help="claims with finishes before measuring"
    )
    parser.add_argument("--seconds", type=float, default=8.0, help="length of each measured window")
    parser.add_argument("--connections", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument(
        "--threads",
        action="store_true",
        help="one thread per connection in this process, instead of one process each",
    )
    args = parser.parse_args()
    if args.ranges:
        args.sizes = [10_000, args.ranges]
    return args


# --- the database: load, refill, finish -------------------------------------


def dsn() -> dict:
    """Django's connection parameters, as plain psycopg takes them."""
    from django.db import connection

    params = connection.get_connection_params()
    keep = {"host", "port", "user", "password", "dbname"}
    return {k: v for k, v in params.items() if k in keep}


def refill_queue(target: int) -> int:
    """Queue new ranges until `target` are queued; how many were added."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM seed_range WHERE status = 'queued'")
        missing = target - cursor.fetchone()[0]
        if missing > 0:
            cursor.execute(REFILL, [missing])
    return max(missing, 0)


def load_ranges(size: int) -> None:
    """Empty the tables, then 100 groups and `size` queued ranges."""
    sql("TRUNCATE seed_range, header_rollup, news_group, seed_node RESTART IDENTITY CASCADE")
    load_groups("alt.binaries.bench", 100)
    refill_queue(size)
    sql("VACUUM ANALYZE seed_range")


def finish_leases() -> None:
    """Between measured rounds, untimed: the round's leases are finished (as
    nodes would) so the live set stays small, as in a steady state."""
    sql(BARE_FINISH_ALL)


def round_cap(size: int) -> int:
    """Claims per round: a tenth of the queue, at least 500, at most ROUND."""
    return min(max(size // 10, 500), ROUND)


# --- the work on each connection --------------------------------------------


class Workload:
    """The nodes and the bodies run on each connection: through the services, or bare."""

    def __init__(self) -> None:
        import psycopg

        from indexer.services import issue_token
        from seeding import services

        self.psycopg = psycopg
        self.issue_token = issue_token
        self.services = services
        self.nodes: list[int] = []
        self.bare_conns: dict[int, Any] = {}

    def reset_nodes(self, count: int) -> None:
        """Forget the nodes (their table was emptied) and issue `count` new ones."""
        self.nodes.clear()
        while len(self.nodes) < count:
            node, _token, _ = self.issue_token(f"bench-{len(self.nodes)}")
            self.nodes.append(node.id)

    def service_pair(self, index: int, stop: Any) -> int:
        """Warm-up: a claim and a finish through the services, as a node does."""
        offer = self.services.lease_range(self.nodes[index])
        if offer.lease is None:
            return 0
        self.services.finish_range(self.nodes[index], offer.lease.id, offer.lease.epoch)
        return 1

    def service_claim(self, index: int, stop: Any) -> int:
        return 0 if self.services.lease_range(self.nodes[index]).lease is None else 1

    def bare_claim(self, index: int, stop: Any) -> int:
        conn = self.bare_conns.get(index)
        if conn is None:
            conn = self.bare_conns[index] = self.psycopg.connect(**dsn(), autocommit=True)
        row = conn.execute(BARE_CLAIM, {"node": self.nodes[index]}).fetchone()
        return 0 if row is None else 1

    def close_bare(self) -> None:
        for conn in self.bare_conns.values():
            conn.close()
        self.bare_conns.clear()


# --- running a body on many connections at once -----------------------------


class ThreadRunner:
    """One thread per connection, started for each round (--threads)."""

    def run(self, count: int, body: Body, seconds: float, cap: int) -> float:
        """Run `body` on `count` threads for `seconds` (or until `cap` claims); claims/s."""
        self.stop = threading.Event()
        self.barrier = threading.Barrier(count + 1)
        self.done = [0] * count
        self.claimed = 0
        self.cap = cap
        self.lock = threading.Lock()
        threads = [threading.Thread(target=self._work, args=(i, body)) for i in range(count)]
        for thread in threads:
            thread.start()
        self.barrier.wait()
        started = time.perf_counter()
        self.stop.wait(seconds)
        self.stop.set()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        return sum(self.done) / elapsed

    def _work(self, index: int, body: Body) -> None:
        from django.db import connections

        self.barrier.wait()
        try:
            while not self.stop.is_set():
                n = body(index, self.stop)
                if n == 0:
                    break
                self.done[index] += n
                with self.lock:
                    self.claimed += n
                    if self.claimed >= self.cap:
                        self.stop.set()
        finally:
            connections.close_all()  # this thread's Django connection

    def close(self) -> None:
        pass


class ProcessPool:
    """`count` forked workers (one connection each, as gunicorn's workers),
    kept across rounds so connections and prepared statements persist."""

    def __init__(self, count: int, body: Body) -> None:
        from django.db import connections

        connections.close_all()  # children open their own connections
        ctx = multiprocessing.get_context("fork")
        self.count = count
        self.stop = ctx.Event()
        self.quit = ctx.Event()
        self.start_line = ctx.Barrier(count + 1)
        self.end_line = ctx.Barrier(count + 1)
        self.done = ctx.Array("q", count)
        self.claimed = ctx.Value("q", 0)
        self.cap = ctx.Value("q", 0)
        self.processes = [
            ctx.Process(target=self._work, args=(i, body), daemon=True) for i in range(count)
        ]
        for process in self.processes:
            process.start()

    def _work(self, index: int, body: Body) -> None:
        while True:
            self.start_line.wait()
            if self.quit.is_set():
                return
            while not self.stop.is_set():
                n = body(index, self.stop)
                if n == 0:
                    break
                self.done[index] += n
                with self.claimed.get_lock():
                    self.claimed.value += n
                    if self.claimed.value >= self.cap.value:
                        self.stop.set()
            self.end_line.wait()

    def run(self, seconds: float, cap: int) -> float:
        for i in range(self.count):
            self.done[i] = 0
        self.claimed.value = 0
        self.cap.value = cap
        self.stop.clear()
        self.start_line.wait()
        started = time.perf_counter()
        self.stop.wait(seconds)
        self.stop.set()
        self.end_line.wait()
        elapsed = time.perf_counter() - started
        return sum(self.done) / elapsed

    def close(self) -> None:
        self.quit.set()
        self.start_line.wait()
        for process in self.processes:
            process.join()


class ProcessRunner:
    """One process per connection (the default): a pool per (count, body), kept until close."""

    def __init__(self) -> None:
        self.pools: dict[tuple[int, Body], ProcessPool] = {}

    def run(self, count: int, body: Body, seconds: float, cap: int) -> float:
        pool = self.pools.get((count, body))
        if pool is None:
            pool = self.pools[(count, body)] = ProcessPool(count, body)
        return pool.run(seconds, cap)

    def close(self) -> None:
        for pool in self.pools.values():
            pool.close()
        self.pools.clear()


Runner = ThreadRunner | ProcessRunner


# --- the measurement --------------------------------------------------------


def warm_up(runner: Runner, workload: Workload, size: int, claims: int) -> None:
    """`claims` claims, each with its finish, on 16 connections: the claim
    index then carries the dead entries a running system has."""
    from django.db import connections

    warm = 0
    started = time.perf_counter()
    while warm < claims:
        round_claims = min(round_cap(size), claims - warm)
        rate = runner.run(WARMUP_CONNECTIONS, workload.service_pair, 3600, round_claims)
        warm += round_claims
        refill_queue(size)
        print(f"  warmup {warm:>7}/{claims} claims, {rate:7.0f}/s", flush=True)
    connections.close_all()
    print(f"  warmed up in {time.perf_counter() - started:.0f} s", flush=True)


def measure(runner: Runner, body: Body, conns: int, size: int, seconds: float) -> float:
    """Claims per second of `body` on `conns` connections over `seconds`.

    Rounds of at most a tenth of the queue, refilled in between, so the queue
    stays near its size; only the claim rounds are timed.
    """
    cap = round_cap(size)
    total_claims, total_time = 0.0, 0.0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        remaining = deadline - time.perf_counter()
        rate = runner.run(conns, body, remaining, cap)
        elapsed = min(remaining, cap / rate if rate else remaining)
        total_claims += rate * elapsed
        total_time += elapsed
        finish_leases()
        refill_queue(size)
    return total_claims / total_time if total_time else 0.0


def measure_pair(
    runner: Runner, workload: Workload, conns: int, size: int, seconds: float
) -> tuple[float, float]:
    """(service, bare) claims/s, two windows each, alternating to share the machine's noise."""
    pairs = []
    for _ in range(2):
        service = measure(runner, workload.service_claim, conns, size, seconds / 2)
        bare = measure(runner, workload.bare_claim, conns, size, seconds / 2)
        pairs.append((service, bare))
    return statistics.mean(p[0] for p in pairs), statistics.mean(p[1] for p in pairs)


def bench_size(
    args: argparse.Namespace, runner: Runner, workload: Workload, size: int
) -> dict[int, tuple[float, float]]:
    """Load `size` queued ranges, warm up, then {connections: (service, bare)} claims/s."""
    load_ranges(size)
    workload.reset_nodes(max(WARMUP_CONNECTIONS, *args.connections))  # a node per connection
    warm_up(runner, workload, size, args.warmup)
    results = {}
    for conns in args.connections:
        service, bare = measure_pair(runner, workload, conns, size, args.seconds)
        results[conns] = (service, bare)
        print(
            f"{size:>10,} {conns:>5} {service:>10.0f} {bare:>10.0f} {service / bare:>6.2f}",
            flush=True,
        )
    workload.close_bare()
    runner.close()
    return results


def print_size_ratios(
    results: dict[int, dict[int, tuple[float, float]]], sizes: list[int], connections: list[int]
) -> None:
    """The service's rate at the largest size over its rate at the smallest."""
    small, big = sizes[0], sizes[-1]
    print(f"\nservice rate at {big:,} vs {small:,} queued:")
    for conns in connections:
        ratio = results[big][conns][0] / results[small][conns][0]
        print(f"  {conns:>2} connections: {ratio:.2f}")


def bench_interleaved(args: argparse.Namespace, workload: Workload) -> dict:
    """Each size in a database of its own, with its own worker processes; the
    sizes' windows alternate, so the machine's load weighs on both alike."""
    names = {size: f"bench_lease_{size}" for size in args.sizes}
    runners = {size: ProcessRunner() for size in args.sizes}
    for size in args.sizes:
        use_database(names[size])
        started = time.perf_counter()
        if args.no_load:  # what --keep kept: its leases finished, the queue refilled
            finish_leases()
            refill_queue(size)
        else:
            load_ranges(size)
        workload.reset_nodes(max(WARMUP_CONNECTIONS, *args.connections))  # same ids in each
        print(f"  {size:,} queued loaded in {time.perf_counter() - started:.0f} s", flush=True)
        warm_up(runners[size], workload, size, args.warmup)
        runners[size].close()  # each pool holds connections: the server allows 100
    results: dict[int, dict[int, tuple[float, float]]] = {size: {} for size in args.sizes}
    for conns in args.connections:
        pairs: dict[int, list[tuple[float, float]]] = {size: [] for size in args.sizes}
        for _ in range(2):
            for size in args.sizes:
                use_database(names[size])
                service = measure(
                    runners[size], workload.service_claim, conns, size, args.seconds / 2
                )
                bare = measure(runners[size], workload.bare_claim, conns, size, args.seconds / 2)
                pairs[size].append((service, bare))
        for size in args.sizes:
            runners[size].close()
            service = statistics.mean(p[0] for p in pairs[size])
            bare = statistics.mean(p[1] for p in pairs[size])
            results[size][conns] = (service, bare)
            print(
                f"{size:>10,} {conns:>5} {service:>10.0f} {bare:>10.0f} {service / bare:>6.2f}",
                flush=True,
            )
    if not args.keep:
        for size in args.sizes:
            drop_database(names[size])
    return results


def main() -> None:
    args = parse_args()
    # One bench node makes thousands of claims a second and holds a round's
    # worth (up to ROUND) unfinished: no real node does. The per-node gate
    # still runs on every claim (its rate bucket is hit, under a limit never
    # reached); the cap's count is off, as a real node's count stops at the
    # cap (LIMIT), a few index entries (docs/performance.md).
    os.environ.setdefault("LEASE_RATE_PER_MINUTE", str(10**9))
    os.environ.setdefault("LEASE_MAX_PER_NODE", "0")
    setup("bench_lease")
    workload = Workload()
    runner: Runner = ThreadRunner() if args.threads else ProcessRunner()
    results = {}
    print(f"{'queued':>10} {'conns':>5} {'service/s':>10} {'bare/s':>10} {'ratio':>6}")
    if args.ranges:
        results = bench_interleaved(args, workload)
    for size in args.sizes if not args.ranges else []:
        results[size] = bench_size(args, runner, workload, size)
    if len(args.sizes) >= 2:
        print_size_ratios(results, args.sizes, args.connections)


if __name__ == "__main__":
    main()
