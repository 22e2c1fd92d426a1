"""Render time of the operators' dashboard and /api/v1/status at 1M ranges (10M with
--ranges 10000000), 10k groups, 1k nodes, a day of rollup.

Baseline: the plain admin index page, rendered in the same run through
Django's test client as the same staff user. The data is loaded with SQL into
a database of the bench's own, dropped at the end unless --keep. Method and
figures: docs/performance.md. With DATABASE_URL set it runs on that
database instead, and empties its ranges, nodes and rollup: never point it at
a coordinator's own.

Run: .venv/bin/python bench/bench_dashboard.py [--renders 50] [--ranges 10000000] [--keep] [--no-load]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("LOG_LEVEL", "WARNING")

from common import size_parser, staff_client
from django_setup import drop_database, setup

DATABASE = "bench_dashboard"
setup(DATABASE)

from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402

from seeding.maintenance import fold_node_totals, fold_rollup_hours  # noqa: E402

LOAD = [
    "TRUNCATE seed_range, group_range_summary, header_rollup, header_rollup_hour, group_lane,"
    " group_lane_work, seed_node, news_group RESTART IDENTITY CASCADE",
    """INSERT INTO news_group (name, active, priority, created_at)
       SELECT 'alt.binaries.bench.' || g, true, 100, now() FROM generate_series(1, %(groups)s) AS g""",
    """INSERT INTO seed_node (name, token_hash, disabled, last_seen_at, created_at)
       SELECT 'seed-' || n, md5(n::text) || md5((n + 1)::text), n %% 100 = 0,
              now() - make_interval(secs => CASE WHEN n %% 10 = 0 THEN 7200 ELSE n %% 50 END), now()
         FROM generate_series(1, %(nodes)s) AS n""",
    # ranges: group g gets a share ~ pow(random, 2); in article order per group
    """INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture, epoch,
                               attempts, headers, files, fragments, error, created_at, done_at)
       SELECT g, s * 5000, s * 5000 + 4999,
              CASE WHEN st = 'done' THEN s * 5000 + 5000 ELSE s * 5000 END,
              st, 100, false, 0, 0,
              CASE WHEN st = 'done' THEN 4900 ELSE 0 END,
              CASE WHEN st = 'done' THEN 40 ELSE 0 END, 0, '', now(),
              CASE WHEN st = 'done' THEN now() END
         FROM (SELECT n::bigint AS s, 1 + (floor(pow(random(), 2) * %(groups)s))::int AS g,
                      CASE WHEN n %% 3 = 0 THEN 'done' WHEN n %% 97 = 0 THEN 'failed'
                           ELSE 'queued' END AS st
                 FROM generate_series(1, %(ranges)s) AS n) AS planned""",
    # 2,000 ranges in work, halfway through
    """UPDATE seed_range AS r
          SET status = 'leased', node_id = 1 + r.id %% %(nodes)s, epoch = 1, attempts = 1,
              leased_at = now(), heartbeat_at = now(), next_id = r.start_id + 2500,
              headers = 2450, files = 20
        WHERE r.id IN (SELECT id FROM seed_range WHERE status = 'queued' ORDER BY id LIMIT 2000)""",
    # a day of rollup: each node, each minute, one group
    """INSERT INTO header_rollup (bucket, node_id, group_id, headers, batches)
       SELECT date_trunc('minute', now()) - make_interval(mins => m), n,
              1 + (n * 7 + m / 30) %% %(groups)s, 500 + (n * m) %% 1000, 2
         FROM generate_series(0, 1439) AS m, generate_series(1, %(nodes)s) AS n""",
    """INSERT INTO group_lane (group_id, lane, node_id, epoch, heartbeat_at, leased_at,
                               planned_articles, ranges_done, headers)
       SELECT g, 'history', CASE WHEN g <= 200 THEN 1 + (g - 1) %% %(nodes)s END, 1,
              CASE WHEN g <= 200 THEN now() END, CASE WHEN g <= 200 THEN now() END,
              100000, g %% 7, g * 10
         FROM generate_series(1, least(5000, %(groups)s)) AS g""",
]


def load(groups: int, ranges: int, nodes: int) -> None:
    params = {"groups": groups, "ranges": ranges, "nodes": nodes}
    with connection.cursor() as cursor:
        for statement in LOAD:
            started = time.perf_counter()
            cursor.execute(statement, params)
            print(f"  {time.perf_counter() - started:6.1f}s  {statement.split()[0]} ...")
    connection.connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def timed(client: Client, url: str, count: int) -> list[float]:
    times = []
    for _ in range(count):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, response.status_code
    return times


def describe(name: str, times: list[float]) -> tuple[float, float]:
    median = statistics.median(times)
    p95 = sorted(times)[max(int(len(times) * 0.95) - 1, 0)]
    print(f"{name:<34} median {median:7.1f} ms   p95 {p95:7.1f} ms")
    return median, p95


def main() -> None:
    parser = size_parser(__doc__, groups=10_000, ranges=1_000_000, nodes=1_000, renders=50)
    parser.add_argument("--no-load", action="store_true", help="reuse the data --keep kept")
    parser.add_argument("--keep", action="store_true", help="keep the bench's database")
    args = parser.parse_args()
    try:
        run(args)
    finally:
        if not args.keep and not os.environ.get("DATABASE_URL"):
            drop_database(DATABASE)
            print("dropped the bench's database (--keep keeps it)")


def run(args: argparse.Namespace) -> None:
    if not args.no_load:
        print(f"loading {args.groups:,} groups, {args.ranges:,} ranges, {args.nodes:,} nodes ...")
        load(args.groups, args.ranges, args.nodes)
    client = staff_client()
    with connection.cursor() as cursor:  # nothing folded yet, also after --no-load
        cursor.execute("DELETE FROM header_rollup_hour")
        cursor.execute("TRUNCATE node_header_total")
        cursor.execute("UPDATE header_fold SET folded_before = '-infinity'")
    # The dashboard never folds (a GET writes nothing): until the periodic
    # upkeep folds them, it sums the day's minutes live.
    describe("dashboard, no hour folded yet", timed(client, "/admin/dashboard/", 5))
    started = time.perf_counter()
    fold_rollup_hours()
    print(
        f"fold of 24 rollup hours (manage.py maintain): {(time.perf_counter() - started) * 1000:.0f} ms"
    )
    # maintain also folds the minutes into the nodes' all-time totals, so the
    # status sums only the last ten minutes or so live (as in a deployment).
    started = time.perf_counter()
    folded = fold_node_totals()
    print(
        f"fold of {folded:,} rollup minutes into node totals (manage.py maintain): "
        f"{(time.perf_counter() - started) * 1000:.0f} ms"
    )
    timed(client, "/admin/", 5)
    timed(client, "/admin/dashboard/", 5)
    base = describe("baseline: admin index", timed(client, "/admin/", args.renders))
    dash = describe("dashboard", timed(client, "/admin/dashboard/", args.renders))
    search = describe(
        "dashboard, search 'bench.12'", timed(client, "/admin/dashboard/?q=bench.12", args.renders)
    )
    last = describe("dashboard, page 50", timed(client, "/admin/dashboard/?page=50", args.renders))
    status = describe("GET /api/v1/status", timed(client, "/api/v1/status", args.renders))
    print(
        f"ratio dashboard/baseline: median {dash[0] / base[0]:.1f}x, p95 {dash[1] / base[1]:.1f}x; "
        f"search {search[0] / base[0]:.1f}x; page 50 {last[0] / base[0]:.1f}x; "
        f"status {status[0] / base[0]:.1f}x"
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM seed_range")
        print(f"seed_range rows: {cursor.fetchone()[0]:,}")


if __name__ == "__main__":
    main()
