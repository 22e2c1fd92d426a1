"""A batch's PostgreSQL work in one process, without HTTP: where its fixed cost goes.

`seeding.services.report_batch` (the batch call's whole transaction) on leased
ranges of a cluster of the bench's own, one connection, batches of --sizes
segments (the fleet simulator's files, new articles every time, 25 segments
a file, most batches creating a release), the sizes taking turns. Each row:
the CPU per batch of this process and of the PostgreSQL backend serving it
(/proc of `pg_backend_pid()`), and what pg_stat_statements gives the batch's
statements (top level, per batch: execution, planning, plans made). The fit
over the sizes splits each into a fixed part and a part per segment. With
--modes the batches run alternately in several session settings (`-` for
none; `plan_cache_mode=force_generic_plan` ...), so each setting is measured
beside the others in the same run. One connection, nobody else's work on the
cluster: CPU and wall clock agree, unlike under bench_call_cost.py's eight
calls in flight. Figures: docs/performance.md, "A batch's fixed cost".

Run: .venv/bin/python bench/bench_batch_fixed.py [--sizes 500 5000 20000]
     [--batches 40] [--rounds 3] [--modes - plan_cache_mode=force_generic_plan]
"""

from __future__ import annotations

import argparse
import os
import random
import time

from bench_call_cost import fit
from bench_fleet import postmaster_pid
from common import load_groups, sql
from django_setup import setup

DATABASE = "bench_batch_fixed"
SEGMENTS_PER_FILE = 25
PLANS = """
SELECT coalesce(sum(total_exec_time) FILTER (WHERE toplevel), 0),
       coalesce(sum(total_plan_time) FILTER (WHERE toplevel), 0),
       coalesce(sum(plans) FILTER (WHERE toplevel), 0),
       coalesce(sum(total_plan_time) FILTER (WHERE NOT toplevel), 0),
       coalesce(sum(plans) FILTER (WHERE NOT toplevel), 0)
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND query NOT LIKE '%%pg_stat_statements%%'
"""

VACUUMS = """
SELECT relname, autovacuum_count + autoanalyze_count FROM pg_stat_user_tables
"""


def cpu_ticks(root: int) -> int:
    """CPU ticks of PostgreSQL's tree: the backend, its parallel workers, the I/O
    workers, the WAL writer, autovacuum, and the children the postmaster reaped."""
    from simulator.fleet import _ticks, process_tree

    return sum(_ticks(p) for p in process_tree(root))


def tree_by_kind(root: int) -> dict[str, int]:
    """CPU ticks of PostgreSQL's processes by kind (their title: `walwriter`,
    `autovacuum launcher`, `io worker`, a backend of a database...)."""
    from collections import Counter

    from simulator.fleet import _ticks, process_tree

    found: Counter[str] = Counter()
    for pid in process_tree(root):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                title = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if pid == root:
            found["exited"] += int(fields[13]) + int(fields[14])
            found["postmaster"] += int(fields[11]) + int(fields[12])
            continue
        kind = title.removeprefix("postgres: ").split(" ")
        found[" ".join(kind[:2]) if kind[0] != "io" else "io workers"] += _ticks(pid)
    return found


def backend_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5_000, 20_000])
    parser.add_argument("--batches", type=int, default=40, help="per size, mode and round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=["-"])
    args = parser.parse_args()
    setup(DATABASE, private=True)
    from django.db import connection

    from catalog.validation import validate_files
    from indexer.models import Node
    from seeding import services
    from simulator.fleet import Profile, make_files, table

    sql("TRUNCATE news_group, seed_node RESTART IDENTITY CASCADE")
    load_groups("alt.binaries.fixed.", 50)
    span = max(args.sizes) + 1
    needed = len(args.sizes) * len(args.modes) * args.rounds * (args.batches + 2)
    sql("INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,"
        " epoch, attempts, headers, files, fragments, error, created_at)"
        " SELECT g.id, 1 + n * %(span)s, (n + 1) * %(span)s, 1 + n * %(span)s, 'queued', 100,"
        " false, 0, 0, 0, 0, 0, '', now()"
        " FROM news_group g, generate_series(0, %(per)s) AS n",
        {"span": span, "per": needed // 50 + 1})  # fmt: skip
    sql("VACUUM ANALYZE seed_range")
    sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
    node = Node.objects.create(name="fixed")
    connection.ensure_connection()
    pid = sql("SELECT pg_backend_pid()")[0][0]
    postgres = postmaster_pid()
    hz = os.sysconf("SC_CLK_TCK")
    rng = random.Random(27)
    # (mode, size) -> [batches, this process's s, backend ticks, PostgreSQL's tree ticks,
    # exec ms, plan ms, plans, nested statements' plan ms and plans]
    totals: dict[tuple[str, int], list[float]] = {}
    print(f"load: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (uptime); "
          f"{args.rounds} rounds of {args.batches} batches a size and mode", flush=True)  # fmt: skip

    def one(size: int, measured: bool, mode: str) -> None:
        lease = services.lease_range(node.id).lease
        assert lease is not None, "out of queued ranges"
        profile = Profile(files=size // SEGMENTS_PER_FILE, segments=SEGMENTS_PER_FILE)
        files, articles = make_files("fixed", rng, lease.start, profile)
        reports = validate_files(files, "files", len(files))
        before = sql(PLANS)[0] if measured else None
        cpu, ticks, tree = time.process_time(), backend_ticks(pid), cpu_ticks(postgres)
        services.report_batch(node.id, lease.id, lease.epoch, lease.start + articles, articles,
                              reports[:-1], reports[-1:])  # fmt: skip
        cpu, ticks = time.process_time() - cpu, backend_ticks(pid) - ticks
        tree = cpu_ticks(postgres) - tree
        if measured:
            after = sql(PLANS)[0]
            row = totals.setdefault((mode, size), [0.0] * 9)
            moved = [float(a) - float(b) for a, b in zip(after, before, strict=True)]
            for i, value in enumerate([1, cpu, ticks, tree, *moved]):
                row[i] += value
        services.finish_range(node.id, lease.id, lease.epoch)

    connection.close()  # the migrations' backend exits before the run is metered
    pid = sql("SELECT pg_backend_pid()")[0][0]
    vacuums_before = dict(sql(VACUUMS))
    kinds_before = tree_by_kind(postgres)
    cold: list[tuple[float, float]] = []  # a new connection's first batch: process s, ticks
    for round_ in range(args.rounds):
        for _ in range(args.batches // 4 + 1):
            connection.close()
            pid = sql("SELECT pg_backend_pid()")[0][0]
            lease = services.lease_range(node.id).lease
            assert lease is not None, "out of queued ranges"
            profile = Profile(
                files=min(args.sizes) // SEGMENTS_PER_FILE, segments=SEGMENTS_PER_FILE
            )
            files, articles = make_files("fixed", rng, lease.start, profile)
            reports = validate_files(files, "files", len(files))
            cpu, ticks = time.process_time(), backend_ticks(pid)
            services.report_batch(node.id, lease.id, lease.epoch, lease.start + articles, articles,
                                  reports[:-1], reports[-1:])  # fmt: skip
            cold.append((time.process_time() - cpu, backend_ticks(pid) - ticks))
            services.finish_range(node.id, lease.id, lease.epoch)
        for mode in args.modes:
            sql("RESET ALL" if mode == "-" else "SET " + mode.replace("=", " = "))
            for size in args.sizes:
                for _ in range(2 if round_ == 0 else 0):  # warm: planned, prepared, cached
                    one(size, False, mode)
                for _ in range(args.batches):
                    one(size, True, mode)
        print(f"round {round_ + 1} done", flush=True)
    print(f"load at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\na new connection's first batch of {min(args.sizes):,} segments ({len(cold)} "
          f"connections): this process {sum(c for c, _ in cold) / len(cold) * 1000:.1f} ms CPU, "
          f"its backend {sum(t for _, t in cold) / len(cold) / hz * 1000:.1f} ms")  # fmt: skip
    kinds_after = tree_by_kind(postgres)
    print(
        "\nPostgreSQL's CPU over the run by process (s; `exited`: the children the postmaster"
        " reaped, autovacuum workers and the bench's closed connections among them):"
    )
    print(table(["process", "CPU s"],
                [[k, f"{(kinds_after.get(k, 0) - kinds_before.get(k, 0)) / hz:.2f}"]
                 for k in sorted(kinds_after)]))  # fmt: skip
    vacuums = [(name, n - vacuums_before.get(name, 0)) for name, n in sql(VACUUMS)]
    print("autovacuum and autoanalyze runs over the run: " + ", ".join(
        f"{name} {n}" for name, n in sorted(vacuums, key=lambda v: -v[1]) if n))  # fmt: skip
    names = ["this process CPU", "backend CPU", "PostgreSQL's tree CPU",
             "statements' execution", "planning", "plans", "nested: planning",
             "nested: plans"]  # fmt: skip
    for mode in args.modes:
        rows, points = [], []
        for size in args.sizes:
            n, cpu, ticks, tree, *statements = totals[(mode, size)]
            values = [cpu * 1000 / n, ticks / hz * 1000 / n, tree / hz * 1000 / n,
                      *(v / n for v in statements)]  # fmt: skip
            points.append((size, values))
            rows.append([f"{size:,}", *(f"{v:.2f}" for v in values)])
        fits = [fit([(s, v[i]) for s, v in points]) for i in range(len(names))]
        rows.append(["fixed (fit)", *(f"{a:.2f}" for a, _ in fits)])
        rows.append(["µs per segment (fit)", *(f"{b * 1000:.2f}" for _, b in fits)])
        print(f"\nsession setting: {mode}; per batch, ms (plans: count)")
        print(table(["segments", *names], rows))


if __name__ == "__main__":
    main()
