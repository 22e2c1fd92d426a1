"""What a held lane costs the range claim (a known limit, docs/performance.md).

Range leases with one big group's history lane held by another node, its
--ranges queued ranges ahead of everyone else's, against the same leases
with the lane free (the baseline). Method and figures: docs/performance.md.

Run: .venv/bin/python bench/bench_held_lane.py [--ranges 200000]
"""

from __future__ import annotations

import argparse
import statistics
import time

from django_setup import setup


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ranges", type=int, default=200_000)
    parser.add_argument("--leases", type=int, default=20)
    args = parser.parse_args()
    setup("bench_held_lane")

    from django.db import connection

    from indexer.models import Group
    from indexer.services import issue_token
    from leases import services as lanes
    from seeding import services

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE seed_range, header_rollup, news_group, seed_node, group_lane "
            "RESTART IDENTITY CASCADE"
        )
    big = Group.objects.create(name="alt.binaries.big")
    small = Group.objects.create(name="alt.binaries.small")
    insert = """
        INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                                epoch, attempts, headers, files, fragments, error, created_at)
        SELECT %s, n * 100, n * 100 + 99, n * 100, 'queued', 100, false, 0, 0, 0, 0, 0, '', now()
          FROM generate_series(1, %s) AS n
    """
    with connection.cursor() as cursor:
        cursor.execute(insert, [big.id, args.ranges])
        cursor.execute(insert, [small.id, 10 * args.leases])
        cursor.execute("VACUUM ANALYZE seed_range")
    ranger = issue_token("ranger")[0]
    window = issue_token("window")[0]

    def time_leases() -> list[float]:
        times = []
        for _ in range(args.leases):
            started = time.perf_counter()
            offer = services.lease_range(ranger.id)
            times.append((time.perf_counter() - started) * 1000)
            assert offer.lease is not None
            services.release_range(ranger.id, offer.lease.id, offer.lease.epoch, uncounted=True)
        return times

    free = time_leases()
    offer = lanes.lease_lane(window.id, "history")
    assert offer.lease is not None and offer.lease.group.id == big.id
    held = time_leases()
    base, walk = statistics.median(free), statistics.median(held)
    print(f"{args.ranges:,} queued ranges of one group ahead of the others")
    print(f"range lease, lane free (baseline)   median {base:8.2f} ms")
    print(f"range lease, lane held               median {walk:8.2f} ms   {walk / base:6.0f}x")


if __name__ == "__main__":
    main()
