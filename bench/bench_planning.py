"""Throughput of planning and of the overview relay's source, each beside a bare baseline.

Overview lines/s from a private INN2 beside a bare socket reading the same
OVER; planning 1M ranges with commit_plan beside a bare COPY of the same rows
into an unindexed table. Method and figures: docs/performance.md.

Run (INN2 needs root or user news): .venv/bin/python bench/bench_planning.py
[--articles 20000] [--groups 1000] [--ranges 1000] [--skip-inn] [--skip-plan] [--repeat 2]
Archive scale (10M ranges): .venv/bin/python bench/bench_planning.py --skip-inn --groups 10000
The bench's database is dropped at the end unless --keep.
"""

from __future__ import annotations

import argparse
import os
import socket
import time
from datetime import UTC, datetime, timedelta

from django_setup import drop_database, setup

DATABASE = "bench_planning"
setup(DATABASE)
# ruff: noqa: E402  (Django must be set up before the project's modules are imported)
import logging

logging.getLogger("seeding.planning").setLevel(logging.WARNING)

from django.db import connection, transaction

from indexer.models import Group
from seeding.models import SeedRange
from seeding.planning import GroupPlan, PlanSummary, commit_plan, cut, interleave
from seeding.relay import gzip_stream
from usenet.nntp import NNTPClient


def best(runs: int, work):
    results = [work() for _ in range(runs)]
    return min(results, key=lambda r: r[0])


# --- 1. overview lines per second from INN2 ----------------------------------


def bare_over(host: str, port: int, group: str, first: int, last: int) -> tuple[float, int]:
    sock = socket.create_connection((host, port))
    buf = bytearray()

    def status() -> bytes:
        while b"\r\n" not in buf:
            buf.extend(sock.recv(262144))
        end = buf.index(b"\r\n")
        line = bytes(buf[:end])
        del buf[: end + 2]
        return line

    status()
    sock.sendall(f"GROUP {group}\r\n".encode())
    status()
    started = time.perf_counter()
    sock.sendall(f"OVER {first}-{last}\r\n".encode())
    status()
    data = bytearray(buf)
    while not data.endswith(b"\r\n.\r\n"):
        data.extend(sock.recv(262144))
    lines = data.count(b"\r\n") - 1
    seconds = time.perf_counter() - started
    sock.sendall(b"QUIT\r\n")
    sock.close()
    return seconds, lines


def client_over(
    host: str, port: int, group: str, first: int, last: int, compression: bool, relay: bool
) -> tuple[float, int]:
    with NNTPClient(host, port, compression=compression, timeout=30) as client:
        client.group(group)
        started = time.perf_counter()
        if relay:
            for _chunk in gzip_stream(client.over(first, last), label="bench"):
                pass
            lines = 0
        else:
            lines = sum(1 for _ in client.over(first, last))
        seconds = time.perf_counter() - started
    return seconds, lines


def bench_overview(articles: int) -> None:
    from tests.support.inn2 import InnServer
    from tests.support.usenet import make_binary_posts

    group = "alt.binaries.bench.planning"
    with InnServer() as server:
        server.create_group(group)
        releases = max(1, articles // 25)
        posts, _ = make_binary_posts(
            group, seed=5, releases=releases, days=30, max_segments=12, text_posts=0
        )
        result = server.post_articles(None, posts[:articles])
        with server.reader() as reader:
            info = reader.group(group)
        first, last = info.first, info.last
        print(
            f"INN2: {result.accepted:,} articles posted in {result.seconds:.1f} s; "
            f"OVER {first}-{last}"
        )
        host, port = server.host, server.port
        methods = {
            "bare": lambda: bare_over(host, port, group, first, last),
            "plain": lambda: client_over(host, port, group, first, last, False, False),
            "deflate": lambda: client_over(host, port, group, first, last, True, False),
            "relay": lambda: client_over(host, port, group, first, last, True, True),
        }
        methods["bare"]()  # warm INN's overview files; the first read after posting is slow
        runs: dict[str, list[tuple[float, int]]] = {name: [] for name in methods}
        for _ in range(5):  # interleaved rounds, so every method sees the same server state
            for name, method in methods.items():
                runs[name].append(method())
        bare, plain, deflate, relay = (min(runs[n]) for n in ("bare", "plain", "deflate", "relay"))
        lines = bare[1]
        rate = {
            name: lines / r[0]
            for name, r in (
                ("bare", bare),
                ("plain", plain),
                ("deflate", deflate),
                ("relay", relay),
            )
        }
        print(f"{lines:,} overview lines, best of 5 interleaved rounds")
        print(f"baseline  bare socket OVER read:          {rate['bare']:>12,.0f} lines/s")
        print(
            f"NNTPClient.over, no compression:          {rate['plain']:>12,.0f} lines/s"
            f"   ratio {rate['plain'] / rate['bare']:.2f}"
        )
        print(
            f"NNTPClient.over, COMPRESS DEFLATE:        {rate['deflate']:>12,.0f} lines/s"
            f"   ratio {rate['deflate'] / rate['bare']:.2f}"
        )
        print(
            f"relay: over (DEFLATE) + gzip_stream:      {rate['relay']:>12,.0f} lines/s"
            f"   ratio {rate['relay'] / rate['bare']:.2f}"
        )


# --- 2. planning 1M ranges ----------------------------------------------------


RANGE_SIZE = 1_000  # articles per planned range


def load_groups(groups: int) -> list[tuple[int, str]]:
    """Empty the tables and create `groups` groups, a day old: [(id, name)]."""
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE seed_range, news_group RESTART IDENTITY CASCADE")
    created = datetime.now(UTC) - timedelta(days=1)
    Group.objects.bulk_create(
        [Group(name=f"alt.binaries.bench.{i:04d}") for i in range(groups)], batch_size=1000
    )
    Group.objects.update(created_at=created)
    return list(Group.objects.order_by("id").values_list("id", "name"))


def plan_summary(rows: list[tuple[int, str]], per_group: int) -> PlanSummary:
    """A plan of `per_group` ranges for each group."""
    summary = PlanSummary(size=RANGE_SIZE, priority=100)
    for gid, name in rows:
        summary.groups.append(GroupPlan(name, gid, low=1, high=per_group * RANGE_SIZE))
    return summary


def time_plan(rows: list[tuple[int, str]], per_group: int) -> tuple[float, int]:
    """commit_plan into an emptied seed_range: (seconds, ranges)."""
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE seed_range RESTART IDENTITY")
    summary = plan_summary(rows, per_group)
    started = time.perf_counter()
    commit_plan(summary, hand_off_backfill=True)
    return time.perf_counter() - started, summary.ranges


def time_bare_copy(rows: list[tuple[int, str]], per_group: int) -> tuple[float, int]:
    """The baseline: the same ranges, cut and interleaved, copied into an unindexed
    table: (seconds of the COPY, ranges)."""
    per = [cut([(1, per_group * RANGE_SIZE)], RANGE_SIZE) for _ in rows]
    ordered = [(rows[i][0], span) for i, span in interleave(per)]
    now = datetime.now(UTC)
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_copy")
        cursor.execute(
            "CREATE TABLE bench_copy (LIKE seed_range INCLUDING DEFAULTS EXCLUDING CONSTRAINTS)"
        )
        started = time.perf_counter()
        with cursor.cursor.copy(
            "COPY bench_copy (id, group_id, start_id, end_id, next_id, status, priority, "
            "capture, epoch, attempts, headers, files, fragments, error, created_at) "
            "FROM STDIN"
        ) as copy:
            for n, (gid, (start, end)) in enumerate(ordered, 1):
                copy.write_row(
                    (n, gid, start, end, start, "queued", 100, False, 0, 0, 0, 0, 0, "", now)
                )
        seconds = time.perf_counter() - started
        cursor.execute("DROP TABLE bench_copy")
    return seconds, len(ordered)


def bench_planning(groups: int, per_group: int, repeat: int) -> None:
    """commit_plan and the bare COPY, alternated `repeat` times; best of each, and
    each round's ratio (the same machine state weighs on both of a round)."""
    rows = load_groups(groups)
    total = groups * per_group
    rounds = []
    for _ in range(repeat):
        planned = time_plan(rows, per_group)
        assert planned[1] == total and SeedRange.objects.count() == total, planned
        rounds.append((planned, time_bare_copy(rows, per_group)))
        print(
            f"  round {len(rounds)}: commit_plan {planned[0]:.1f} s,"
            f" bare COPY {rounds[-1][1][0]:.1f} s",
            flush=True,
        )
    planned = min((r[0] for r in rounds), key=lambda r: r[0])
    bare = min((r[1] for r in rounds), key=lambda r: r[0])
    print(f"{groups:,} groups x {per_group:,} ranges = {total:,} ranges, best of {repeat}")
    print(
        f"baseline  bare COPY, unindexed table:     {bare[1] / bare[0]:>12,.0f} ranges/s"
        f"   ({bare[0]:.1f} s)"
    )
    print(
        f"commit_plan (lock, coverage, cut, COPY):  {planned[1] / planned[0]:>12,.0f} ranges/s"
        f"   ({planned[0]:.1f} s)   ratio {bare[0] / planned[0]:.2f}"
    )
    print(
        "ratio by round (bare COPY s / commit_plan s): "
        + ", ".join(f"{b[0] / p[0]:.2f} ({p[0]:.1f} s / {b[0]:.1f} s)" for p, b in rounds)
    )
    # Planning again reads the whole coverage and adds nothing.
    summary = plan_summary(rows, per_group)
    started = time.perf_counter()
    commit_plan(summary, hand_off_backfill=True)
    print(
        f"planning again over {total:,} ranges (adds {summary.ranges}): "
        f"{time.perf_counter() - started:.1f} s"
    )
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE seed_range, news_group RESTART IDENTITY CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--articles", type=int, default=20_000)
    parser.add_argument("--groups", type=int, default=1_000)
    parser.add_argument("--ranges", type=int, default=1_000)
    parser.add_argument("--skip-inn", action="store_true")
    parser.add_argument("--skip-plan", action="store_true")
    parser.add_argument("--repeat", type=int, default=2, help="planning rounds (plan, then COPY)")
    parser.add_argument("--keep", action="store_true", help="keep the bench's database")
    args = parser.parse_args()
    try:
        if not args.skip_inn:
            bench_overview(args.articles)
            print()
        if not args.skip_plan:
            bench_planning(args.groups, args.ranges, args.repeat)
    finally:
        if not args.keep and not os.environ.get("DATABASE_URL"):
            drop_database(DATABASE)


if __name__ == "__main__":
    main()
