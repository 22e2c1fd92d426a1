"""Latency of a group lease (lease + release of a lane) at 10,000 groups and a million ranges.

Baseline: a bare indexed single-row SELECT on seed_range, in the same run; the
range claim is timed too, with no lanes held and with 16, alternating over
--rounds rounds, and the ratio of the two printed with its spread over the
rounds. Method and figures: docs/performance.md.

Run: .venv/bin/python bench/bench_group_lease.py [--groups 10000] [--ranges 1000000] [--runs 2000]
     [--rounds 4]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from django_setup import setup

setup("bench_group_lease")

from django.conf import settings  # noqa: E402
from django.db import connection  # noqa: E402

from indexer.services import issue_token  # noqa: E402
from leases import services  # noqa: E402
from seeding import services as seeding  # noqa: E402

# One node makes thousands of lease calls a minute here: no rate or cap (the gate still runs).
settings.LEASE_RATE_PER_MINUTE = 0
settings.LEASE_MAX_PER_NODE = 0

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


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--ranges", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument(
        "--rounds", type=int, default=4, help="alternating rounds of the range claim's two kinds"
    )
    return parser.parse_args()


def execute(statement: str, params: dict | list | None = None) -> tuple | None:
    """Run one statement; its first row, if it returns any."""
    with connection.cursor() as cursor:
        cursor.execute(statement, params)
        return cursor.fetchone() if cursor.description else None


def planned_articles() -> tuple:
    """The lanes' planned and claimable work (sums), to compare with a recount."""
    return execute(
        "SELECT sum(planned_articles), sum(claimable_articles), count(claimable_priority)"
        " FROM group_lane"
    )


def load_groups(groups: int, ranges: int) -> None:
    """Load the groups and ranges (counted by the trigger); check a recount; vacuum; print."""
    execute(LOAD[0])
    services.rebuild_lane_work()  # configure the trigger, so the load below is counted by it
    t0 = time.perf_counter()
    for statement in LOAD[1:]:
        execute(statement, {"groups": groups, "ranges": ranges})
    loaded = time.perf_counter() - t0
    counted = planned_articles()
    t0 = time.perf_counter()
    services.rebuild_lane_work()  # a full recount (what a change of lane bounds costs)
    rebuilt = time.perf_counter() - t0
    assert planned_articles() == counted, "the trigger's counts differ from a recount"
    for table in ("seed_range", "group_lane", "group_lane_work", "news_group"):
        execute(f"VACUUM ANALYZE {table}")
    lanes, planned = execute(
        "SELECT count(*), count(*) FILTER (WHERE claimable_priority IS NOT NULL) FROM group_lane"
    )
    print(
        f"{groups:,} groups, {ranges:,} ranges loaded in {loaded:.1f} s "
        f"(trigger counting included); a full recount takes {rebuilt:.1f} s; "
        f"{lanes:,} lanes, {planned:,} with claimable work"
    )


class Calls:
    """The timed calls, through the services as node 0, and the bare baselines."""

    def __init__(self, ranges: int, runs: int) -> None:
        self.nodes = [issue_token(f"bench-{i}")[0].id for i in range(17)]
        self.node = self.nodes[0]
        ids = list(range(1, ranges, max(ranges // runs, 1)))
        self.position = iter(ids * 4)

    def lease_release(self) -> None:
        offer = services.lease_lane(self.node, "history")
        assert offer.lease is not None
        services.release_lane(self.node, offer.lease.group.id, "history", offer.lease.epoch)

    def lease_next_release(self) -> None:
        offer = services.lease_lane(self.node, "history")
        assert offer.lease is not None
        group, epoch = offer.lease.group.id, offer.lease.epoch
        services.next_lane_range(self.node, group, "history", epoch)
        services.release_lane(self.node, group, "history", epoch)

    def point_select(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT id, next_id FROM seed_range WHERE id = %s", [next(self.position)]
            )
            cursor.fetchone()

    def point_update(self) -> None:
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE seed_range SET heartbeat_at = now() WHERE id = %s", [next(self.position)]
            )

    def claim_release(self) -> None:
        offer = seeding.lease_range(self.node)
        assert offer.lease is not None
        seeding.release_range(self.node, offer.lease.id, offer.lease.epoch, uncounted=True)

    def hold_lanes(self) -> list[tuple[int, int, int]]:
        """Nodes 1..16 each hold a history lane: (node, group, epoch) of each."""
        held = []
        for holder in self.nodes[1:]:
            lease = services.lease_lane(holder, "history").lease
            assert lease is not None
            held.append((holder, lease.group.id, lease.epoch))
        return held

    def free_lanes(self, held: list[tuple[int, int, int]]) -> None:
        for holder, group, epoch in held:
            services.release_lane(holder, group, "history", epoch)


def measure_lanes(calls: Calls, runs: int) -> float:
    """Warm up, then time the baselines and the lane leases; the baseline's median."""
    # warm up: a long run of hand-outs, so indexes carry the churn of a steady state
    timed(calls.lease_release, runs)
    timed(calls.lease_next_release, runs // 2)
    execute("VACUUM ANALYZE group_lane")
    selects = timed(calls.point_select, runs)  # the ratios are to the row printed
    baseline = statistics.median(selects)
    describe("baseline: indexed single-row SELECT", selects, None)
    describe("single-row UPDATE + commit (for scale)", timed(calls.point_update, runs), baseline)
    describe("lease + release (history lane)", timed(calls.lease_release, runs), baseline)
    describe("lease + next + release", timed(calls.lease_next_release, runs), baseline)
    return baseline


def vacuumed_claims(calls: Calls, runs: int) -> list[float]:
    """Range claim + release timings, after a vacuum, a warm-up and a vacuum."""
    execute("VACUUM seed_range")
    timed(calls.claim_release, max(runs // 4, 1))
    execute("VACUUM seed_range")
    return timed(calls.claim_release, runs)


def measure_claims(calls: Calls, runs: int, rounds: int, baseline: float) -> None:
    """The range claim with no lanes held and with 16 history lanes held (its NOT
    EXISTS probe on group_lane), alternating over `rounds` rounds (in turn first and
    second, so that drift and the machine's other load weigh on both alike); the
    ratio of their medians, and its spread over the rounds."""
    window = max(runs // rounds, 1)
    samples: dict[bool, list[float]] = {False: [], True: []}
    ratios = []
    for round_ in range(rounds):
        medians = {}
        for lanes in (False, True) if round_ % 2 == 0 else (True, False):
            held = calls.hold_lanes() if lanes else []
            timings = vacuumed_claims(calls, window)
            calls.free_lanes(held)
            samples[lanes] += timings
            medians[lanes] = statistics.median(timings)
        ratios.append(medians[True] / medians[False])
    describe("range claim + release, no lanes held", samples[False], baseline)
    describe("range claim + release, 16 lanes held", samples[True], baseline)
    ratio = statistics.median(samples[True]) / statistics.median(samples[False])
    print(
        f"range claim, 16 lanes held ÷ none held (medians of {rounds} alternating rounds "
        f"of {window:,} claims each): {ratio:.2f}; per round {min(ratios):.2f} to {max(ratios):.2f} "
        f"({', '.join(f'{r:.2f}' for r in ratios)}) (goal ≤ 2)"
    )


def main() -> None:
    args = parse_args()
    load_groups(args.groups, args.ranges)
    calls = Calls(args.ranges, args.runs)
    baseline = measure_lanes(calls, args.runs)
    measure_claims(calls, args.runs, args.rounds, baseline)


if __name__ == "__main__":
    main()
