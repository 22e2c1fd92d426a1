"""Range claims per second: the lease service beside the bare claim statement.

For each table size (10,000 and 1,000,000 queued ranges) the table is loaded,
then driven to a steady state with --warmup claims, each followed by a
finish through the services as nodes do, so the claim index carries the dead
entries a running system has. Then, with 1, 4 and 16 connections (one
process each, kept across rounds, as gunicorn's workers are; --threads runs
them as threads of this process instead), it measures claims per second:

- service: `seeding.services.lease_range` (the real code, through Django);
- bare:    the one-statement claim (UPDATE … WHERE id = (SELECT … FOR UPDATE
           SKIP LOCKED LIMIT 1)) on psycopg connections.

The two alternate on the same database in the same run. Between measured
rounds of at most 5,000 claims (untimed) the round's leases are finished
and the queue is refilled, so it stays near its size and the live set
small. Claims per second and the ratios are printed; `docs/performance.md`
holds the figures.

Run: .venv/bin/python bench/bench_lease.py [--sizes 10000 1000000] [--warmup 200000] [--seconds 8]
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from django_setup import setup

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


ROUND = 5000  # claims between refills of the queue


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 1_000_000])
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
    setup("bench_lease")

    import psycopg
    from django.db import connection, connections

    from indexer.services import issue_token
    from seeding import services

    def dsn() -> dict:
        params = connection.get_connection_params()
        params.pop("cursor_factory", None)
        params.pop("context", None)
        params.pop("prepare_threshold", None)
        return {
            k: v for k, v in params.items() if k in {"host", "port", "user", "password", "dbname"}
        }

    def sql(statement: str) -> None:
        with connection.cursor() as cursor:
            cursor.execute(statement)

    def load(size: int) -> None:
        sql("TRUNCATE seed_range, header_rollup, news_group, seed_node RESTART IDENTITY CASCADE")
        sql(
            "INSERT INTO news_group (name, active, priority, created_at) "
            "SELECT 'alt.binaries.bench' || g, true, 100, now() FROM generate_series(1, 100) AS g"
        )
        refill(size)
        sql("VACUUM ANALYZE seed_range")

    def refill(target: int) -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM seed_range WHERE status = 'queued'")
            missing = target - cursor.fetchone()[0]
            if missing > 0:
                cursor.execute(
                    """
                    INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                                            epoch, attempts, headers, files, fragments, error, created_at)
                    SELECT 1 + (n %% 100), n * 1000, n * 1000 + 999, n * 1000, 'queued', 100, false,
                           0, 0, 0, 0, 0, '', now()
                      FROM generate_series((SELECT coalesce(max(id), 0) + 1 FROM seed_range),
                                           (SELECT coalesce(max(id), 0) FROM seed_range) + %s) AS n
                    """,
                    [missing],
                )
        return max(missing, 0)

    nodes = []

    def ensure_nodes(count: int) -> None:
        while len(nodes) < count:
            node, _token, _ = issue_token(f"bench-{len(nodes)}")
            nodes.append(node.id)

    def run_threads(
        count: int, body: Callable[[int, threading.Event], int], seconds: float, cap: int
    ) -> float:
        """Run `body` on `count` threads for `seconds` (or until `cap` claims); claims/s."""
        stop = threading.Event()
        barrier = threading.Barrier(count + 1)
        done = [0] * count
        claimed = [0]
        lock = threading.Lock()

        def worker(index: int) -> None:
            barrier.wait()
            try:
                while not stop.is_set():
                    n = body(index, stop)
                    if n == 0:
                        break
                    done[index] += n
                    with lock:
                        claimed[0] += n
                        if claimed[0] >= cap:
                            stop.set()
            finally:
                connections.close_all()  # this thread's Django connection

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
        for thread in threads:
            thread.start()
        barrier.wait()
        started = time.perf_counter()
        stop.wait(seconds)
        stop.set()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        return sum(done) / elapsed

    class ProcessPool:
        """`count` forked workers (one connection each, as gunicorn's workers),
        kept across rounds so connections and prepared statements persist."""

        def __init__(self, count: int, body: Callable[[int, Any], int]) -> None:
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

        def _work(self, index: int, body: Callable[[int, Any], int]) -> None:
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

    pools: dict[tuple[int, Callable[[int, Any], int]], ProcessPool] = {}

    def run_processes(
        count: int, body: Callable[[int, Any], int], seconds: float, cap: int
    ) -> float:
        pool = pools.get((count, body))
        if pool is None:
            pool = pools[(count, body)] = ProcessPool(count, body)
        return pool.run(seconds, cap)

    def close_pools() -> None:
        for pool in pools.values():
            pool.close()
        pools.clear()

    run_parallel = run_threads if args.threads else run_processes

    def service_pair(index: int, stop: threading.Event) -> int:
        """Warm-up: a claim and a finish through the services, as a node does."""
        offer = services.lease_range(nodes[index])
        if offer.lease is None:
            return 0
        services.finish_range(nodes[index], offer.lease.id, offer.lease.epoch)
        return 1

    def service_body(index: int, stop: threading.Event) -> int:
        return 0 if services.lease_range(nodes[index]).lease is None else 1

    bare_conns: dict[int, psycopg.Connection] = {}

    def bare_body(index: int, stop: threading.Event) -> int:
        conn = bare_conns.get(index)
        if conn is None:
            conn = bare_conns[index] = psycopg.connect(**dsn(), autocommit=True)
        row = conn.execute(BARE_CLAIM, {"node": nodes[index]}).fetchone()
        return 0 if row is None else 1

    def finish_all() -> None:
        # Between measured rounds, untimed: the round's leases are finished
        # (as nodes would) so the live set stays small, as in a steady state.
        sql(BARE_FINISH_ALL)

    def measure(kind: str, conns: int, size: int, seconds: float) -> float:
        # Rounds of at most a tenth of the queue, refilled in between, so the
        # queue stays near its size; only the claim rounds are timed.
        body = service_body if kind == "service" else bare_body
        cap = min(max(size // 10, 500), ROUND)
        total_claims, total_time = 0.0, 0.0
        deadline = time.perf_counter() + seconds
        while time.perf_counter() < deadline:
            remaining = deadline - time.perf_counter()
            rate = run_parallel(conns, body, remaining, cap)
            elapsed = min(remaining, cap / rate if rate else remaining)
            total_claims += rate * elapsed
            total_time += elapsed
            finish_all()
            refill(size)
        return total_claims / total_time if total_time else 0.0

    ensure_nodes(max(args.connections))
    results: dict[tuple[int, int], tuple[float, float]] = {}
    print(f"{'queued':>10} {'conns':>5} {'service/s':>10} {'bare/s':>10} {'ratio':>6}")
    for size in args.sizes:
        load(size)
        nodes.clear()
        ensure_nodes(max(args.connections))
        warm = 0
        started = time.perf_counter()
        while warm < args.warmup:
            round_claims = min(max(size // 10, 500), ROUND, args.warmup - warm)
            rate = run_parallel(16, service_pair, 3600, round_claims)
            warm += round_claims
            refill(size)
            print(f"  warmup {warm:>7}/{args.warmup} claims, {rate:7.0f}/s", flush=True)
        connections.close_all()
        print(f"  warmed up in {time.perf_counter() - started:.0f} s", flush=True)
        for conns in args.connections:
            pairs = []
            for _ in range(2):  # alternate to share the machine's noise
                service = measure("service", conns, size, args.seconds / 2)
                bare = measure("bare", conns, size, args.seconds / 2)
                pairs.append((service, bare))
            service = statistics.mean(p[0] for p in pairs)
            bare = statistics.mean(p[1] for p in pairs)
            results[(size, conns)] = (service, bare)
            print(
                f"{size:>10,} {conns:>5} {service:>10.0f} {bare:>10.0f} {service / bare:>6.2f}",
                flush=True,
            )
        for conn in bare_conns.values():
            conn.close()
        bare_conns.clear()
        close_pools()

    if len(args.sizes) >= 2:
        small, big = args.sizes[0], args.sizes[-1]
        print(f"\nservice rate at {big:,} vs {small:,} queued:")
        for conns in args.connections:
            ratio = results[(big, conns)][0] / results[(small, conns)][0]
            print(f"  {conns:>2} connections: {ratio:.2f}")


if __name__ == "__main__":
    main()
