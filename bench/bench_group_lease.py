"""Latency of a group lease (lease + release of a lane) at 10,000 groups and a million ranges.

Loads, with set-based SQL, 10,000 groups and 1,000,000 ranges (sizes skewed
so groups differ in planned work; 5 % tail ranges; a tenth done), lets the
trigger count the planned work, vacuums, warms up, then times through the
services, in the same run:

- baseline: a bare indexed single-row SELECT on seed_range (and, for scale,
  a single-row UPDATE with its commit: a lease is two commits);
- lease + release: `leases.services.lease_lane` then `release_lane` (history);
- lease + next + release: the same with the lane's first range handed out;
- range claim: `seeding.services.lease_range` + `release_range` while 16
  history lanes are held (the claim's NOT EXISTS probe on group_lane).

Runs against its own embedded database (EMBEDDED_DATABASE_NAME=bench_group_lease),
or DATABASE_URL if set. Run: ``.venv/bin/python bench/bench_group_lease.py``
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from django_setup import setup

setup("bench_group_lease")

from django.db import connection  # noqa: E402

from indexer.services import issue_token  # noqa: E402
from leases import services  # noqa: E402
from seeding import services as seeding  # noqa: E402

LOAD = [
    "TRUNCATE seed_range, group_lane, group_lane_work, group_lane_config, seed_node, news_group"
    " RESTART IDENTITY CASCADE",
    # groups named like real ones, a few inactive
    """INSERT INTO news_group (name, active, priority, created_at)
       SELECT 'alt.binaries.bench.' || g, g %% 200 <> 0, 100, now()
         FROM generate_series(1, %(groups)s) AS g""",
    # ranges: skewed per group (group g gets a share ~ 1/(1 + g %% 50)), 5 %% tail,
    # priorities 50/100/150 for history, a tenth already done
    """INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture, epoch,
                               attempts, headers, files, fragments, error, created_at, done_at)
       SELECT g, s * 5000, s * 5000 + 4999, s * 5000,
              CASE WHEN n %% 10 = 0 THEN 'done' ELSE 'queued' END,
              CASE WHEN n %% 20 = 1 THEN 10 ELSE (ARRAY[50, 100, 100, 150])[1 + n %% 4] END,
              n %% 3 = 0, 0, 0, 0, 0, 0, '', now(),
              CASE WHEN n %% 10 = 0 THEN now() END
         FROM (SELECT n, 1 + (floor(pow(random(), 2) * %(groups)s))::int AS g, n::bigint AS s
                 FROM generate_series(1, %(ranges)s) AS n) AS planned""",
]


def timed(fn: Callable[[], None], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t0) * 1000)
    return out


def describe(name: str, samples: list[float], baseline: float | None) -> None:
    samples = sorted(samples)
    median = statistics.median(samples)
    p95 = samples[int(len(samples) * 0.95) - 1]
    ratio = f"{median / baseline:8.1f}x" if baseline else ""
    print(f"{name:<42} median {median:7.3f} ms   p95 {p95:7.3f} ms   {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--ranges", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()

    with connection.cursor() as cursor:
        cursor.execute(LOAD[0])
    services.rebuild_lane_work()  # configure the trigger, so the load below is counted by it
    t0 = time.perf_counter()
    with connection.cursor() as cursor:
        for statement in LOAD[1:]:
            cursor.execute(statement, {"groups": args.groups, "ranges": args.ranges})
    loaded = time.perf_counter() - t0
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(planned_articles) FROM group_lane")
        counted = cursor.fetchone()[0]
    t0 = time.perf_counter()
    services.rebuild_lane_work()  # a full recount (what a change of lane bounds costs)
    rebuilt = time.perf_counter() - t0
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(planned_articles) FROM group_lane")
        assert cursor.fetchone()[0] == counted, "the trigger's counts differ from a recount"
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE seed_range")
        cursor.execute("VACUUM ANALYZE group_lane")
        cursor.execute("VACUUM ANALYZE group_lane_work")
        cursor.execute("VACUUM ANALYZE news_group")
        cursor.execute(
            "SELECT count(*), count(*) FILTER (WHERE urgent_priority IS NOT NULL) FROM group_lane"
        )
        lanes, planned = cursor.fetchone()
    print(
        f"{args.groups:,} groups, {args.ranges:,} ranges loaded in {loaded:.1f} s "
        f"(trigger counting included); a full recount takes {rebuilt:.1f} s; "
        f"{lanes:,} lanes, {planned:,} with planned work"
    )

    nodes = [issue_token(f"bench-{i}")[0].id for i in range(17)]
    node = nodes[0]

    def lease_release() -> None:
        offer = services.lease_lane(node, "history")
        assert offer.lease is not None
        services.release_lane(node, offer.lease.group.id, "history", offer.lease.epoch)

    def lease_next_release() -> None:
        offer = services.lease_lane(node, "history")
        assert offer.lease is not None
        services.next_lane_range(node, offer.lease.group.id, "history", offer.lease.epoch)
        services.release_lane(node, offer.lease.group.id, "history", offer.lease.epoch)

    ids = list(range(1, args.ranges, max(args.ranges // args.runs, 1)))
    position = iter(ids * 4)

    def point_select() -> None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT id, next_id FROM seed_range WHERE id = %s", [next(position)])
            cursor.fetchone()

    # warm up: a long run of hand-outs, so indexes carry the churn of a steady state
    timed(lease_release, args.runs)
    timed(lease_next_release, args.runs // 2)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE group_lane")

    def point_update() -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE seed_range SET heartbeat_at = now() WHERE id = %s", [next(position)]
            )

    selects = timed(point_select, args.runs)  # the ratios are to the row printed
    baseline = statistics.median(selects)
    describe("baseline: indexed single-row SELECT", selects, None)
    describe("single-row UPDATE + commit (for scale)", timed(point_update, args.runs), baseline)
    describe("lease + release (history lane)", timed(lease_release, args.runs), baseline)
    describe("lease + next + release", timed(lease_next_release, args.runs), baseline)

    def claim_release() -> None:
        offer = seeding.lease_range(node)
        assert offer.lease is not None
        seeding.release_range(node, offer.lease.id, offer.lease.epoch, uncounted=True)

    def vacuum() -> None:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM seed_range")

    # The range claim before and after 16 history lanes are held (its NOT
    # EXISTS probe on group_lane), each after a vacuum and a warm-up.
    vacuum()
    timed(claim_release, args.runs // 4)
    vacuum()
    describe("range claim + release, no lanes held", timed(claim_release, args.runs), baseline)
    for holder in nodes[1:]:
        assert services.lease_lane(holder, "history").lease is not None
    vacuum()
    timed(claim_release, args.runs // 4)
    vacuum()
    describe("range claim + release, 16 lanes held", timed(claim_release, args.runs), baseline)


if __name__ == "__main__":
    main()
