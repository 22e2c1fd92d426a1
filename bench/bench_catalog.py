"""Segments stored per second through the catalog's batch service, and lookups.

Baseline: a bare COPY of the same segment rows into an unindexed table, in the
same run; into an empty catalog and into one with --stored segments (10M by
default, 100M at archive scale), the two phases alternated --rounds times in
one run (two databases of the bench's own, dropped at the end unless --keep).
Then message-id lookups and file lists over HTTP routes (Django's test
client, the real database) beside a bare primary-key read. Method and
figures: docs/performance.md. With DATABASE_URL set it TRUNCATES catalog_file.

Run: .venv/bin/python bench/bench_catalog.py [--batches 10] [--stored 10000000]
     .venv/bin/python bench/bench_catalog.py --stored 100000000 --keep   # archive scale
     .venv/bin/python bench/bench_catalog.py --stored 100000000 --no-load  # reuse what --keep kept
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from urllib.parse import quote

os.environ.setdefault("LOG_LEVEL", "WARNING")

from common import staff_client
from django_setup import drop_database, setup, use_database

BIG, EMPTY = "bench_catalog", "bench_catalog_empty"
setup(BIG)

from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402

from catalog import services  # noqa: E402
from catalog.releases import assign_releases  # noqa: E402
from catalog.services import rebuild_catalog_summary, store_files  # noqa: E402
from catalog.validation import FileReport  # noqa: E402
from indexer.models import Group  # noqa: E402

FILES_PER_BATCH = 1000
SEGMENTS = 50
POSTER = "Uploader <up@nyuu.invalid>"


# Files per release (--release-files): 1, every file a release of its own
# (the most releases a batch can touch); 20, rar sets of 20 files.
RELEASE_FILES = [1]


def file_report(serial: int, first_part: int) -> FileReport:
    per = RELEASE_FILES[0]
    index = serial % per + 1 if per > 1 else 1
    name = f"bench.{serial // per:09d}.part{index:02d}.rar"
    subject = f'[{index:02d}/20] - "{name}" yEnc ({first_part}/{2 * SEGMENTS})'
    segments = [
        (part, 10_000_000 + serial * 200 + part, f"<{serial}.{part}.x7Qp2@nyuu.invalid>", 716_800)
        for part in range(first_part, first_part + SEGMENTS)
    ]
    return FileReport(subject, POSTER, 1_700_000_000 + serial % 86_400, 2 * SEGMENTS, segments)


def make_batches(start: int, count: int) -> tuple[list[list[FileReport]], list[list[FileReport]]]:
    """(first halves to store beforehand, measured batches)."""
    half = FILES_PER_BATCH // 2
    before, measured = [], []
    serial = start
    for _ in range(count):
        merging = list(range(serial, serial + half))
        new = list(range(serial + half, serial + FILES_PER_BATCH))
        serial += FILES_PER_BATCH
        before.append([file_report(s, 1) for s in merging])
        measured.append(
            [file_report(s, SEGMENTS + 1) for s in merging] + [file_report(s, 1) for s in new]
        )
    return before, measured


def store_seconds(group_id: int, batch: list[FileReport]) -> float:
    started = time.perf_counter()
    with transaction.atomic():
        store_files(group_id, None, batch, [])
    return time.perf_counter() - started


def copy_seconds(group_id: int, batch: list[FileReport]) -> float:
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor: COPY is not in Django's API
        with raw.copy(
            "COPY bench_copy (group_id, file_serial, part, article, message_id, bytes) FROM STDIN"
        ) as copy:
            for serial, item in enumerate(batch):
                for part, article, message_id, size in item.segments:
                    copy.write_row((group_id, serial, part, article, message_id, size))
    return time.perf_counter() - started


LOAD = """
INSERT INTO catalog_file (group_id, key, release_key, rule_version, subject, poster, name,
    file_index, file_count, total, date, parts, articles, sizes, message_ids, conflict_ids,
    segments, bytes, complete, conflicts, created_at, updated_at)
SELECT %(group_id)s, decode(md5('preload' || g), 'hex'), NULL, 1,
       '[01/20] - "preload.' || g || '.part01.rar" yEnc (1/50)', %(poster)s,
       'preload.' || g || '.part01.rar', 1, 20, 50, to_timestamp(1600000000 + g),
       p.parts, p.articles, p.sizes,
       ARRAY(SELECT '<' || g || '.' || n || '.x7Qp2@nyuu.invalid>' FROM generate_series(1, 50) AS n),
       '{}', 50, 50 * 716800, true, 0, now(), now()
  FROM generate_series(%(first)s::bigint, %(last)s::bigint) AS g,
       LATERAL (SELECT array_agg(n ORDER BY n) AS parts,
                       array_agg(5000000000 + g * 50 + n ORDER BY n) AS articles,
                       array_agg(716800 ORDER BY n) AS sizes
                  FROM generate_series(1, 50) AS n) AS p
"""


# The GIN indexes are dropped during the preload and built again after it
# (one entry per segment: a build is far quicker than 100M inserts).
GIN_INDEXES = (
    "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'catalog_file'"
    " AND indexdef LIKE '%% USING gin %%'"
)


def preload(group_id: int, segments: int) -> float:
    files = segments // 50
    started = time.perf_counter()
    step = 200_000
    with connection.cursor() as cursor:
        cursor.execute(GIN_INDEXES)
        gin = cursor.fetchall()
        for name, _ in gin:
            cursor.execute(f'DROP INDEX "{name}"')
    for first in range(1, files + 1, step):
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(
                LOAD,
                {
                    "group_id": group_id,
                    "poster": POSTER,
                    "first": first,
                    "last": min(first + step - 1, files),
                },
            )
        print(f"  {min(first + step - 1, files) * 50:,} segments", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        for name, definition in gin:
            built = time.perf_counter()
            cursor.execute(definition)
            print(f"  {name} built in {time.perf_counter() - built:.0f} s", flush=True)
        cursor.execute("RESET maintenance_work_mem")
        cursor.execute("VACUUM ANALYZE catalog_file")
    return time.perf_counter() - started


def stored_segments() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(segments), 0) FROM catalog_file")
        return int(cursor.fetchone()[0])


def clean_pending_list() -> float:
    """Merge the message-id index's pending list (what autovacuum does off the batch path)."""
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SELECT gin_clean_pending_list('catalog_file_message_ids_idx')")
    return time.perf_counter() - started


# The catalog summary's triggers in the batch path, on (True) or off.
SUMMARY_TRIGGERS = {
    True: "ALTER TABLE catalog_file ENABLE TRIGGER group_catalog_summary_insert,"
    " ENABLE TRIGGER group_catalog_summary_update, ENABLE TRIGGER group_catalog_summary_delete",
    False: "ALTER TABLE catalog_file DISABLE TRIGGER group_catalog_summary_insert,"
    " DISABLE TRIGGER group_catalog_summary_update, DISABLE TRIGGER group_catalog_summary_delete",
}
RELEASE_TRIGGERS = {
    True: "ALTER TABLE catalog_file ENABLE TRIGGER catalog_release_insert,"
    " ENABLE TRIGGER catalog_release_update, ENABLE TRIGGER catalog_release_delete",
    False: "ALTER TABLE catalog_file DISABLE TRIGGER catalog_release_insert,"
    " DISABLE TRIGGER catalog_release_update, DISABLE TRIGGER catalog_release_delete",
}
# What the interleaved batches leave out (--without): the summary or releases.
WITHOUT = ["summary"]


def no_releases(group: str, rule_version: int, files: list, created: list) -> list[None]:
    return [None] * len(files)


def summary_triggers(enabled: bool) -> None:
    """Keep the per-group totals in the batch path, or not (the bench's comparison)."""
    with connection.cursor() as cursor:
        cursor.execute(SUMMARY_TRIGGERS[enabled])


def compared_part(enabled: bool) -> None:
    """Turn what --without names on or off: the summary's triggers, or releases
    (finding and creating them before the merge, and their triggers)."""
    if WITHOUT[0] == "summary":
        summary_triggers(enabled)
        return
    services.assign_releases = assign_releases if enabled else no_releases  # type: ignore[assignment]
    with connection.cursor() as cursor:
        cursor.execute(RELEASE_TRIGGERS[enabled])


def measure(group_id: int, serial: int, batches: int) -> tuple[float, ...]:
    """(store_files rate, the same with the index upkeep it deferred, bare COPY rate,
    store_files rate without the catalog summary, with ÷ without batch by batch).

    Each batch is stored, then the same rows are copied, so whatever else the
    machine (or autovacuum) does meanwhile weighs on both alike. Between them,
    as many batches are stored with the summary's triggers disabled, in the
    order with, without, without, with, … so a drift during the phase weighs
    on both kinds alike; the last figure is the ratio of their median batch
    times (one disturbed batch does not move it). The message-id index's
    pending list holds both kinds' entries; its upkeep is charged half to the
    batches with the summary.
    """
    before, measured = make_batches(serial, 2 * batches)
    for batch in before:
        with transaction.atomic():
            store_files(group_id, None, batch, [])
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE catalog_file")
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS bench_copy (group_id bigint, file_serial bigint,"
            " part int, article bigint, message_id text, bytes int)"
        )
        cursor.execute("TRUNCATE bench_copy")
    stored: list[float] = []
    plain: list[float] = []
    copied_time = 0.0
    for index, batch in enumerate(measured):
        if index % 4 in (1, 2):
            compared_part(enabled=False)
            plain.append(store_seconds(group_id, batch))
            compared_part(enabled=True)
        else:
            stored.append(store_seconds(group_id, batch))
            copied_time += copy_seconds(group_id, batch)
    segments = batches * FILES_PER_BATCH * SEGMENTS
    upkeep = clean_pending_list() / 2
    return (
        segments / sum(stored),
        segments / (sum(stored) + upkeep),
        segments / copied_time,
        segments / sum(plain),
        statistics.median(plain) / statistics.median(stored),
    )


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=10, help="measured batches per phase")
    parser.add_argument("--stored", type=int, default=10_000_000, help="segments preloaded")
    parser.add_argument("--rounds", type=int, default=2, help="empty/stored phases alternated")
    parser.add_argument("--lookups", type=int, default=200, help="requests of each lookup kind")
    parser.add_argument("--keep", action="store_true", help="keep the bench's databases")
    parser.add_argument(
        "--no-load", action="store_true", help="reuse the preload a --keep run left"
    )
    parser.add_argument(
        "--without", choices=["summary", "releases"], default="summary",
        help="what the interleaved batches leave out (the last columns)",
    )  # fmt: skip
    parser.add_argument("--release-files", type=int, default=1, help="files per release")
    args = parser.parse_args()
    WITHOUT[0] = args.without
    RELEASE_FILES[0] = max(1, args.release_files)
    return args


def bench_group() -> int:
    return Group.objects.get_or_create(name="alt.binaries.bench")[0].id


def load(stored: int) -> None:
    """Empty the catalog, then preload `stored` segments with generate_series."""
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE catalog_file")
    group_id = bench_group()
    # The preload's statements insert 200,000 files each: the summary is
    # recounted once afterwards instead (the rebuild command's service).
    summary_triggers(enabled=False)
    seconds = preload(group_id, stored)
    summary_triggers(enabled=True)
    print(f"preloaded {stored_segments():,} segments in {seconds:.0f} s (generate_series)")
    started = time.perf_counter()
    rebuild_catalog_summary()
    print(f"catalog summary recounted in {time.perf_counter() - started:.1f} s (the rebuild)")


def phase(database: str, serial: int, batches: int) -> tuple[float, ...]:
    """One measured phase in `database` (the empty one is emptied first)."""
    use_database(database)
    if database == EMPTY:
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE catalog_file")
    return measure(bench_group(), serial, batches)


def print_rows(rows: list[tuple], args: argparse.Namespace) -> None:
    print("segments stored per second (ratio: to the bare COPY in the same phase)")
    print(
        f"{'':24} {'store_files':>12} {'ratio':>6} {'+ index upkeep':>15} {'ratio':>6}"
        f" {'bare COPY':>12} {'no ' + args.without:>12}"
    )
    for label, stored, with_upkeep, copied, plain, _ in rows:
        print(
            f"{label:24} {stored:>12,.0f} {stored / copied:>6.2f} {with_upkeep:>15,.0f}"
            f" {with_upkeep / copied:>6.2f} {copied:>12,.0f} {plain:>12,.0f}"
        )


def storing(args: argparse.Namespace) -> None:
    """The empty and the stored catalog's phases, alternated; their ratios."""
    label = f"{args.stored / 1e6:g}M segments stored"
    rows, pairs = [], []
    for r in range(args.rounds):
        empty = phase(EMPTY, 1_000_000_000 + r * 10_000_000, args.batches)
        big = phase(BIG, 2_000_000_000 + r * 10_000_000, args.batches)
        rows += [(f"empty catalog, round {r + 1}", *empty), (f"{label}, round {r + 1}", *big)]
        pairs.append((empty, big))
    print_rows(rows, args)
    ratios = [big[0] / empty[0] for empty, big in pairs]
    print(
        f"store_files with {label} / with none, by round: "
        + ", ".join(f"{x:.2f}" for x in ratios)
        + f"; overall {sum(b[0] for _, b in pairs) / sum(e[0] for e, _ in pairs):.2f}"
    )
    print(
        f"store_files with the {args.without} / without: "
        + ", ".join(f"{row[1] / row[4]:.2f}" for row in rows)
    )


def percentiles(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[max(int(len(ordered) * 0.99) - 1, 0)]


def timed_get(client: Client, urls: list[str]) -> list[float]:
    times = []
    for url in urls:
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.content[:200])
    return times


def bare_reads(ids: list[int]) -> list[float]:
    times = []
    with connection.cursor() as cursor:
        for file_id in ids:
            started = time.perf_counter()
            cursor.execute("SELECT id, name, segments FROM catalog_file WHERE id = %s", [file_id])
            cursor.fetchone()
            times.append((time.perf_counter() - started) * 1000)
    return times


def lookups(count: int) -> None:
    """Message-id lookups and file lists through the API routes, p50/p99."""
    use_database(BIG)
    client = staff_client()
    with connection.cursor() as cursor:
        cursor.execute("SELECT min(id), max(id) FROM catalog_file")
        low, high = cursor.fetchone()
    rng = random.Random(7)
    candidates = [rng.randint(low, high) for _ in range(20 * count)]
    with connection.cursor() as cursor:  # ids have gaps (a merge takes a sequence value)
        cursor.execute(
            "SELECT id, message_ids[1 + (id %% 50)] FROM catalog_file WHERE id = ANY(%s)",
            [candidates],
        )
        found = cursor.fetchall()
    rng.shuffle(found)
    ids = [row[0] for row in found[:count]]
    message_ids = [row[1] for row in found[:count]]
    kinds = [
        ("baseline: one file by id (bare SQL)", None),
        ("GET /api/v1/files/{id}", [f"/api/v1/files/{i}" for i in ids]),
        ("message-id lookup", [f"/api/v1/files?message_id={quote(m)}" for m in message_ids]),
        ("files list, first page", ["/api/v1/files"] * count),
        ("files list, a group's first page", ["/api/v1/files?group=alt.binaries.bench"] * count),
        ("files list, deep page by keyset", [f"/api/v1/files?after={i}" for i in ids]),
        ("files list, page 1000 (offset)", ["/api/v1/files?page=1000"] * max(count // 10, 5)),
    ]
    print(f"\n{count} requests of each kind over {high - low + 1:,} files (warm-up: 10)")
    for name, urls in kinds:
        if urls is None:
            bare_reads(ids[:10])
            times = bare_reads(ids)
        else:
            timed_get(client, urls[:10])
            times = timed_get(client, urls)
        p50, p99 = percentiles(times)
        print(f"{name:<40} p50 {p50:8.2f} ms   p99 {p99:8.2f} ms", flush=True)


def main() -> None:
    args = parse_args()
    with connection.cursor() as cursor:
        cursor.execute("SELECT version()")
        server = cursor.fetchone()[0].split(" on ")[0]
    batch_segments = FILES_PER_BATCH * SEGMENTS
    print(f"{server}; {args.batches} batches of {FILES_PER_BATCH} files x {SEGMENTS} segments")
    print(f"({batch_segments:,} segments each: half new files, half merged into stored ones)")
    print(f"{RELEASE_FILES[0]} file(s) per release; interleaved batches without the {args.without}")
    try:
        if not args.no_load:
            load(args.stored)
        storing(args)
        lookups(args.lookups)
        use_database(BIG)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_size_pretty(pg_total_relation_size('catalog_file'))")
            print(f"catalog_file with indexes and TOAST: {cursor.fetchone()[0]}")
            cursor.execute("DROP TABLE IF EXISTS bench_copy")
    finally:
        if not args.keep and not os.environ.get("DATABASE_URL"):
            for name in (BIG, EMPTY):
                drop_database(name)
            print("dropped the bench's databases (--keep keeps them)")


if __name__ == "__main__":
    main()
