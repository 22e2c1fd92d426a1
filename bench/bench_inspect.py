"""Inspection (issue 26): the parsers' speed, and a node inspecting releases on INN2.

Parse speed: par2 packets, nfo text, archive headers and yEnc bodies
(sabctools against the pure-Python path), first on real-shaped inputs, then
on hostile inputs of growing size (1 KB ... 10 MB). Each hostile row prints
MB/s, the steps the parser counted per input byte (inspection/steps.py), and
its speed as a ratio to the 1 KB case of the same run: linear work keeps the
ratio near or above 1 (fixed costs are spread over more bytes); a parser
whose work grew faster than its input would fall towards 0.

Fleet: --releases obfuscated releases (tests/support/inspect_posts.py: a
par2 index by par2cmdline, an nfo, a zip) posted to a private INN2; one
``--mode inspect`` worker (one news-server connection) inspects them all
against a scripted coordinator on loopback (lease, handing out as many as a call
asks for; reports, alone or together; HTTP/1.1, its
connections kept, as the coordinator's gunicorn keeps them), beside a bare
reader that only fetches BODY of the same articles over one connection of the
same client, read the way the node reads them (as on the wire, with a
deadline), COMPRESS the same for both (--compress), in the same run.
A run reads the releases as many times as makes the bare reader's run last
--fleet-seconds; --rounds rounds each run the bare reader and the node, which
goes first swapping each round; each round's releases per second and ratio
are printed with the load average and the CPU a release (the bare reader's, the
node's process's, the scripted coordinator's), then the median and the spread
(goal: the node at >= 0.7x the bare reader). The figures are in docs/performance.md
("Inspection parsers", "Inspecting nodes").

Run: ``.venv/bin/python bench/bench_inspect.py [--max-size 10000000] [--seconds 0.3]
[--releases 60] [--part-size 384000] [--rounds 5] [--fleet-seconds 3]
[--compress off|on|both] [--cost 40]``
"""

from __future__ import annotations

import argparse
import hashlib
import io
import math
import multiprocessing
import os
import random
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import size_parser
from inspection import archives, nfo, par2, yenc
from inspection.errors import InspectError
from inspection.steps import STEPS

RAR_DIR = Path(__file__).resolve().parent.parent / "tests" / "inspection" / "data" / "rar"


def timed(parse: Callable[[bytes], object], data: bytes, seconds: float) -> tuple[float, int]:
    """Seconds per parse (best of repeated runs filling `seconds`) and the steps of one."""
    before = STEPS.taken
    _run(parse, data)
    steps = STEPS.taken - before
    best = float("inf")
    deadline = time.perf_counter() + seconds
    runs = 0
    while runs < 3 or time.perf_counter() < deadline:
        start = time.perf_counter()
        _run(parse, data)
        best = min(best, time.perf_counter() - start)
        runs += 1
    return best, steps


def _run(parse: Callable[[bytes], object], data: bytes) -> None:
    try:
        parse(data)
    except InspectError:
        pass  # hostile input: the parser's own error is the expected outcome


def yenc_encode(data: bytes) -> bytes:
    """A yEnc body of data, 128-byte lines (the bench's own encoder: no dependency)."""
    out = bytearray()
    line = 0
    for byte in data:
        code = (byte + 42) & 0xFF
        if code in (0, 10, 13, 61) or (line == 0 and code in (9, 32, 46)):
            out += bytes((61, (code + 64) & 0xFF))
            line += 2
        else:
            out.append(code)
            line += 1
        if line >= 128:
            out += b"\r\n"
            line = 0
    return (
        b"=ybegin part=1 line=128 size=%d name=a8f7d6e5c4b3.part01.rar\r\n" % len(data)
        + b"=ypart begin=1 end=%d\r\n" % len(data)
        + bytes(out)
        + b"\r\n=yend size=%d part=1 pcrc32=%08x\r\n" % (len(data), zlib.crc32(data))
    )


def par2_packet(kind: bytes, body: bytes) -> bytes:
    rest = b"S" * 16 + kind + body + b"\0" * (-len(body) % 4)
    return b"PAR2\0PKT" + struct.pack("<Q", 32 + len(rest)) + hashlib.md5(rest).digest() + rest


def real_par2(rng: random.Random) -> tuple[str, bytes]:
    """A par2 index made by par2cmdline over 20 files, or built packet by packet without it."""
    tool = shutil.which("par2")
    if tool:
        with tempfile.TemporaryDirectory() as directory:
            names = [f"Some.Release.2024.1080p.WEB.x264-GRP.part{n:02d}.rar" for n in range(20)]
            for name in names:
                (Path(directory) / name).write_bytes(rng.randbytes(20_000))
            subprocess.run(
                [tool, "create", "-q", "-q", "-s4096", "-r1", "-n1", "set.par2", *names],
                cwd=directory,
                check=True,
                capture_output=True,
            )
            return "par2 index, 20 files (par2cmdline)", (Path(directory) / "set.par2").read_bytes()
    ids = [rng.randbytes(16) for _ in range(20)]
    packets = [par2_packet(par2.TYPE_MAIN, struct.pack("<QI", 4096, 20) + b"".join(ids))]
    for n, file_id in enumerate(ids):
        name = f"Some.Release.2024.1080p.WEB.x264-GRP.part{n:02d}.rar".encode()
        packets.append(
            par2_packet(
                par2.TYPE_FILEDESC, file_id + rng.randbytes(32) + struct.pack("<Q", 20_000) + name
            )
        )
    return "par2 index, 20 files (built: no par2 here)", b"".join(packets)


def real_inputs(rng: random.Random) -> list[tuple[str, Callable[[bytes], object], bytes]]:
    stream = io.BytesIO()
    with zipfile.ZipFile(stream, "w") as archive:
        for n in range(50):
            archive.writestr(f"Some.Release.2024/file{n:02d}.mkv", rng.randbytes(2000))
    nfo_text = (
        "╔════════════════════════════╗\r\n"
        + "║ Some.Movie.2024.1080p.BluRay.x264-GRP ║\r\n" * 3
        + "https://www.imdb.com/title/tt0111161/\r\nhttp://thetvdb.com/?tab=series&id=81189\r\n"
        + "░▒▓█ " * 600
    ).encode("cp437")
    article = rng.randbytes(700_000)
    par2_label, par2_data = real_par2(rng)
    rows = [
        (par2_label, par2.parse, par2_data),
        ("nfo, cp437 art (4 KB)", nfo.parse, nfo_text),
        (
            "RAR5 first volume, first 8 KiB",
            archives.parse,
            (RAR_DIR / "rar5-vols.part1.first8k.rar").read_bytes(),
        ),
        ("RAR4 unicode names", archives.parse, (RAR_DIR / "unicode2.rar").read_bytes()),
        ("zip, 50 local headers", archives.parse, stream.getvalue()),
        ("yEnc 700 KB article, pure Python", yenc.decode_pure, yenc_encode(article)),
    ]
    if yenc.decoder_name() != "pure-python":
        rows.append(
            (f"yEnc 700 KB article, {yenc.decoder_name()}", yenc.decode, yenc_encode(article))
        )
    return rows


def hostile(kind: str, size: int, rng: random.Random) -> bytes:
    """size bytes built to make the parser work hardest."""
    if kind == "par2: headers claiming the rest":
        count = max(1, size // 64)  # each header's length reaches the end: its MD5 fails
        return b"".join(
            b"PAR2\0PKT" + struct.pack("<Q", (count - n) * 64) + b"\0" * 48 for n in range(count)
        )
    if kind == "par2: 64-byte packets":
        unit = par2_packet(b"PAR 2.0\0Creator\0", b"")
        return unit * max(1, size // len(unit))
    if kind == "nfo: ids and links":
        unit = b"tt1234567 thetvdb.com/series/ a.b.c-D tt "
        return (unit * (size // len(unit) + 1))[:size]
    if kind == "rar4: empty blocks":
        block = struct.pack("<HBHH", 0, 0x7A, 0x8000, 11) + b"\0\0\0\0"
        block = struct.pack("<H", zlib.crc32(block[2:]) & 0xFFFF) + block[2:]
        return archives.RAR4_MARKER + block * max(1, (size - 7) // len(block))
    if kind == "zip: empty local headers":
        entry = struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0, 0, 0, 0, 1, 0) + b"x"
        return entry * max(1, min(size // len(entry), archives.MAX_ENTRIES - 1))
    data = rng.randbytes(max(1, size * 100 // 103))  # yEnc: random data, about size encoded
    return yenc_encode(data)


HOSTILE: list[tuple[str, Callable[[bytes], object]]] = [
    ("par2: headers claiming the rest", par2.parse),
    ("par2: 64-byte packets", par2.parse),
    ("nfo: ids and links", nfo.parse),
    ("rar4: empty blocks", archives.parse),
    ("zip: empty local headers", archives.parse),
    ("yEnc: random data, pure Python", yenc.decode_pure),
]
if yenc.decoder_name() != "pure-python":
    HOSTILE.append((f"yEnc: random data, {yenc.decoder_name()}", yenc.decode))


# --- the fleet part: a node inspecting releases posted to INN2 ---------------------

FLEET_GROUP = "alt.binaries.bench.inspect"


def fleet(options: argparse.Namespace) -> None:
    """Inspections per second of one node (one worker, one news-server connection)
    and the bytes it fetched per release, against a bare reader's BODY of the same
    articles over one connection, in the same run on the same INN2."""
    from tests.support.inn2 import InnServer
    from tests.support.inspect_posts import lease_articles, obfuscated_release

    with InnServer() as inn:
        inn.create_group(FLEET_GROUP)
        leases = []
        for number in range(options.releases):
            files = obfuscated_release(
                FLEET_GROUP,
                seed=1000 + number,
                video_bytes=2 * options.part_size,
                part_size=options.part_size,
            )
            named = lease_articles(files)
            wanted = {message_id for item in named for message_id in item["message_ids"]}
            articles = [a for f in files.values() for a in f.articles if a.message_id in wanted]
            result = inn.post_articles(None, articles)
            if result.refused:
                raise SystemExit(f"INN2 refused articles: {result.refused}")
            leases.append(named)
        articles_per_release = sum(len(i["message_ids"]) for i in leases[0])
        modes = {"off": (False,), "on": (True,), "both": (False, True)}[options.compress]
        passes = passes_for(options, inn, leases, modes[0])
        print(
            f"\nFleet: {len(leases)} obfuscated releases on INN2, each read as its par2 index,"
            f" its nfo and its first archive article ({articles_per_release} articles,"
            f" {options.part_size} B parts); one connection each; a run reads them"
            f" {passes} time(s) (--fleet-seconds {options.fleet_seconds:g});"
            f" {options.rounds} rounds, bare reader and node alternating"
            f" (which goes first swaps each round); load average {load()}"
        )
        rows = []
        for compression in modes:
            label = "COMPRESS DEFLATE" if compression else "no COMPRESS (--mode inspect's)"
            runs = []
            for round_number in range(options.rounds):
                readers = [
                    lambda: bare_reader(inn, leases * passes, compression),
                    lambda: inspecting_node(inn, leases * passes, compression),
                ]
                first, second = readers if round_number % 2 == 0 else readers[::-1]
                one, other = first(), second()
                bare, node = (one, other) if round_number % 2 == 0 else (other, one)
                if bare[1] != node[1]:
                    raise SystemExit(f"the node fetched {node[1]} bytes, the bare reader {bare[1]}")
                runs.append((bare, node))
                count = len(leases) * passes
                ms = {
                    key: node[2][key] / count * 1000
                    for key in (
                        "news_seconds",
                        "inspect_seconds",
                        "cpu_seconds",
                        "coordinator_cpu_seconds",
                    )
                }
                print(
                    f"  {label:<30} round {round_number + 1}:"
                    f" bare {count / bare[0]:>7.1f} releases/s ({bare[0] / count * 1000:.2f} ms),"
                    f" node {count / node[0]:>7.1f} ({node[0] / count * 1000:.2f} ms: fetching"
                    f" {ms['news_seconds']:.2f}, parsing {ms['inspect_seconds']:.2f}),"
                    f" node / bare {bare[0] / node[0]:.2f}x; CPU a release: bare"
                    f" {bare[2]['cpu_seconds'] / count * 1000:.2f} ms, node {ms['cpu_seconds']:.2f}"
                    f" + coordinator {ms['coordinator_cpu_seconds']:.2f}; load {load()}"
                )
            rows.append((label, runs))
    print(
        f"\n  {'connection':<30} {'reader':<24} {'releases/s (median, min-max)':>30}"
        f" {'MB/s':>6} {'bytes/release':>13}"
    )
    count = len(leases) * passes
    for label, runs in rows:
        for index, reader in ((0, "bare reader: BODY only"), (1, "--mode inspect")):
            rates = [count / run[index][0] for run in runs]
            fetched = runs[0][index][1]
            seconds = statistics.median(run[index][0] for run in runs)
            print(
                f"  {label:<30} {reader:<24} {statistics.median(rates):>12.1f}"
                f" ({min(rates):>7.1f}-{max(rates):<7.1f})"
                f" {fetched / seconds / 1e6:>6.1f} {fetched / count:>13.0f}"
            )
        cpu = {
            who: statistics.median(run[index][2][key] for run in runs) / count * 1000
            for who, index, key in (
                ("bare", 0, "cpu_seconds"),
                ("node", 1, "cpu_seconds"),
                ("coordinator", 1, "coordinator_cpu_seconds"),
            )
        }
        print(
            f"  {label:<30} CPU ms a release (medians): bare reader {cpu['bare']:.2f},"
            f" node {cpu['node']:.2f}, its scripted coordinator {cpu['coordinator']:.2f}"
        )
        ratios = [bare[0] / node[0] for bare, node in runs]
        print(
            f"  {label:<30} node / bare reader: median {statistics.median(ratios):.2f}x"
            f" (min {min(ratios):.2f}x, max {max(ratios):.2f}x over {len(ratios)} rounds;"
            f" goal >= 0.7x), bytes fetched 1.00x"
        )
    print(f"  load average at the end: {load()}")


def load() -> str:
    """The 1, 5 and 15 minute load averages: the bench shares the machine."""
    return " ".join(f"{value:.1f}" for value in os.getloadavg())


def passes_for(
    options: argparse.Namespace, inn: Any, leases: list[list[dict[str, Any]]], compression: bool
) -> int:
    """How many times a run reads the releases so that the bare reader's run lasts
    --fleet-seconds (at least once): measured on one warm-up pass of each reader,
    which also warms INN's cache and the node's code paths."""
    seconds, _bytes, _counters = bare_reader(inn, leases, compression)
    inspecting_node(inn, leases, compression)
    return max(1, math.ceil(options.fleet_seconds / max(seconds, 1e-6)))


def bare_reader(
    inn: Any, leases: list[list[dict[str, Any]]], compression: bool
) -> tuple[float, int, dict[str, float]]:
    """BODY of every article the leases name, in order, on one connection: seconds,
    bytes (and no counters: it only reads). Read as the node reads them
    (NewsServerArticles): as on the wire, still dot-stuffed, with a deadline."""
    from usenet.nntp import NNTPClient

    fetched = 0
    with NNTPClient(inn.host, inn.port, timeout=30, compression=compression) as client:
        started, cpu = time.perf_counter(), time.process_time()
        for named in leases:
            for item in named:
                for message_id in item["message_ids"]:
                    deadline = time.monotonic() + 60
                    body = client.body(message_id, yenc.MAX_BODY, deadline, stuffed=True)
                    fetched += len(body)
        seconds = time.perf_counter() - started
        return seconds, fetched, {"cpu_seconds": time.process_time() - cpu}


def inspecting_node(
    inn: Any, leases: list[list[dict[str, Any]]], compression: bool
) -> tuple[float, int, dict[str, float]]:
    """One InspectWorker over the leases, against a scripted coordinator on loopback
    (lease, reports alone or together) in a process of its own, as a real coordinator is (in this one
    its CPU would take the node's GIL): seconds from its first lease call to its last
    report, bytes fetched, and the node's counters (seed_node.control.Stats)."""
    from seed_node.articles import NewsServerArticles
    from seed_node.control import Context, Control, Settings, Stats
    from seed_node.http import Coordinator
    from seed_node.inspecting import InspectWorker
    from seed_node.sources import NewsServerSource
    from usenet.nntp import NewsServerConfig, NNTPPool

    processes = multiprocessing.get_context("fork")
    urls: Any = processes.Queue()
    done: Any = processes.Queue()
    stop = processes.Event()
    child = processes.Process(
        target=scripted_coordinator, args=(leases, urls, done, stop), daemon=True
    )
    children_cpu = _children_cpu()
    child.start()
    config = NewsServerConfig.from_url(
        f"{inn.url}/?connections=1&timeout=30&compression={int(compression)}"
    )
    pool = NNTPPool(config)
    try:
        url = urls.get(timeout=60)
        settings = Settings(exit_when_idle=True)
        stats = Stats()
        articles = NewsServerArticles(pool, settings.fetch_seconds)
        context = Context(NewsServerSource(pool), settings, Control(), stats, articles)
        worker = InspectWorker("bench", Coordinator(url, "sn_bench"), context)
        started, cpu = time.perf_counter(), time.process_time()
        worker.run()
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu
    finally:
        pool.close()
        stop.set()
    reports, whole = done.get(timeout=60)
    child.join(60)
    if reports != len(leases) or not whole:
        raise SystemExit("the node did not report every release whole")
    counters = {
        **stats.everything(),
        "cpu_seconds": cpu,  # the node's process, every thread
        "coordinator_cpu_seconds": _children_cpu() - children_cpu,
    }
    return seconds, int(counters["article_bytes"]), counters


def _children_cpu() -> float:
    """CPU seconds of this process's children that have ended (the scripted coordinator)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scripted_coordinator(
    leases: list[list[dict[str, Any]]], urls: Any, done: Any, stop: Any
) -> None:
    """In a child process: hand out the leases in order, answer every report; once
    `stop` is set, put (reports received, every one whole) on `done`."""
    from tests.support.scripted import NO_LEASE, ScriptedCoordinator

    queue = list(enumerate(leases, start=1))  # a lease may name a release twice (passes)

    def lease(body: Any) -> tuple[int, Any]:
        if not queue:
            return NO_LEASE
        handed = []
        for number, named in queue[: (body or {}).get("count", 1)]:  # as many as asked for
            data = {"id": number, "epoch": 1, "release": number, "group": FLEET_GROUP}
            handed.append({**data, "articles": named})
        del queue[: len(handed)]
        answer = {"lease": handed[0], "leases": handed, "retry_after": None, "paused": None}
        return 200, answer

    release = {"id": 1, "name": "x"}

    def together(body: Any) -> tuple[int, Any]:
        answers = [
            {"id": item["id"], "status": 200, "release": release} for item in body["reports"]
        ]
        return 200, {"reports": answers}

    scripted = ScriptedCoordinator(keep_alive=True)  # as gunicorn keeps them (WEB_KEEPALIVE)
    scripted.routes["/inspections/lease"] = lease
    scripted.routes["/inspections/reports"] = together
    scripted.routes["*"] = lambda _body: (200, {"release": release})
    urls.put(scripted.url)
    stop.wait()
    reports = scripted.posted("/report") + [
        item for call in scripted.posted("/inspections/reports") for item in call["reports"]
    ]
    done.put((len(reports), all(r["results"] and not r["missing"] for r in reports)))
    scripted.close()


# --- the coordinator's cost per inspection result -------------------------------------

COST_DATABASE = "bench_inspect"
COST_GROUP = "alt.binaries.bench.inspect.cost"


def coordinator_cost(options: argparse.Namespace) -> None:
    """CPU of the coordinator (gunicorn's tree) and PostgreSQL (its tree) per report,
    read from /proc around each call (simulator/fleet.py's CpuMeter, as
    bench_call_cost.py reads it), beside a heartbeat of the same lease as the
    baseline, in the same run on `manage.py serve`: the inspections are leased
    MAX_REPORTS a call, and each call's reports go, in turn, one call each or all
    in one POST /inspections/reports."""
    import os

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_fleet import free_port, postmaster_pid
    from common import sql
    from django_setup import setup

    setup(COST_DATABASE, private=True)  # PostgreSQL's CPU is metered: a cluster of its own
    from catalog.services import store_files
    from indexer.models import Group
    from indexer.services import issue_token
    from inspections import planning
    from inspections.serializers import MAX_REPORTS
    from seed_node.articles import ArticleMissing
    from seed_node.http import Coordinator
    from seed_node.inspecting import InspectLease, build_report
    from simulator.fleet import CpuMeter
    from tests.support.inspect_posts import catalog_reports, obfuscated_release

    sql("TRUNCATE news_group, seed_node, rate_bucket RESTART IDENTITY CASCADE")
    group = Group.objects.create(name=COST_GROUP)
    bodies: dict[str, bytes] = {}
    for number in range(options.cost):
        files = obfuscated_release(
            COST_GROUP, seed=5000 + number, video_bytes=2 * options.part_size,
            part_size=options.part_size,
        )  # fmt: skip
        bodies.update((a.message_id, a.body) for f in files.values() for a in f.articles)
        store_files(group.id, None, [], catalog_reports(files))
    planning.reset_mark()
    planned = planning.plan_all()
    _node, token, _created = issue_token("bench-inspect")
    from django.db import connection

    connection.close()

    def fetch(message_id: str, _cap: int) -> bytes:
        if message_id not in bodies:
            raise ArticleMissing("430 no such article")
        return bodies[message_id]

    port = free_port()
    log = Path(__file__).resolve().parent.parent / "var" / "bench_inspect-serve.log"
    env = {
        **os.environ,
        "EMBEDDED_DATABASE_NAME": COST_DATABASE,
        "INSPECT_LEASES_PER_NODE": "0",
        "LEASE_RATE_PER_MINUTE": "0",
    }
    command = [sys.executable, "manage.py", "serve", "--no-migrate", "--bind", f"127.0.0.1:{port}"]
    server = subprocess.Popen(
        command, cwd=log.parent.parent, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/readyz", server, log)
        client = Coordinator(f"http://127.0.0.1:{port}", token, timeout=60)
        meter = CpuMeter({"gunicorn": server.pid, "postgres": postmaster_pid()})
        kinds = ("heartbeat", "report alone", f"{MAX_REPORTS} together")
        spent = {kind: dict.fromkeys(("gunicorn", "postgres"), 0) for kind in kinds}
        counted = dict.fromkeys(kinds, 0)  # inspections each row's CPU is spread over
        calls = 0
        results = 0
        groups = 0

        def metered(kind: str, call: Callable[[], Any], inspections: int) -> Any:
            before = meter.sample()
            answer = call()
            after = meter.sample()
            for tree in spent[kind]:
                spent[kind][tree] += after[tree] - before[tree]
            counted[kind] += inspections
            return answer

        while True:
            offer = client.post("/inspections/lease", {"count": MAX_REPORTS})
            if not offer["leases"]:
                break
            leases = [InspectLease.from_json(data) for data in offer["leases"]]
            reports = [build_report(lease, fetch) for lease in leases]
            for lease in leases:
                beat = partial(client.post, f"{lease.path}/heartbeat", {"epoch": lease.epoch})
                metered("heartbeat", beat, 1)
            if groups % 2 == 0 or len(leases) == 1:  # alternating, so drift hits both alike
                for lease, report in zip(leases, reports, strict=True):
                    metered("report alone", partial(client.post, f"{lease.path}/report", report), 1)
            else:
                items = [
                    {"id": lease.id, **report}
                    for lease, report in zip(leases, reports, strict=True)
                ]
                post = partial(client.post, "/inspections/reports", {"reports": items})
                answer = metered(kinds[2], post, len(leases))
                if [item["status"] for item in answer["reports"]] != [200] * len(leases):
                    raise SystemExit(f"reports together refused: {answer}")
            groups += 1
            calls += len(leases)
            results += sum(len(report["results"]) for report in reports)
    finally:
        server.terminate()
        server.wait(60)
    if not calls or calls != planned.planned:
        raise SystemExit(f"{calls} inspections leased of {planned.planned} planned ({planned})")
    print(
        f"\nThe coordinator's cost per inspection result: {calls} reports"
        f" ({options.cost} releases stored, {planned.planned} planned by INSPECT_RELEASES)"
        f"; {results / calls:.1f} results each; leased {MAX_REPORTS} a call; each lease call's"
        f" reports sent alone or {MAX_REPORTS} in one call, in turn; `manage.py serve`,"
        " CPU ms per inspection from /proc"
    )
    print(
        f"  {'call':<14} {'inspections':>11} {'gunicorn':>9} {'postgres':>9} {'total':>9} {'ratio':>7}"
    )
    base = sum(spent["heartbeat"].values()) / max(counted["heartbeat"], 1) or 1
    for kind, trees in spent.items():
        count = max(counted[kind], 1)
        ms = {tree: ticks / meter.hz / count * 1000 for tree, ticks in trees.items()}
        total = sum(trees.values()) / count
        print(
            f"  {kind:<14} {counted[kind]:>11} {ms['gunicorn']:>9.2f} {ms['postgres']:>9.2f}"
            f" {sum(ms.values()):>9.2f} {total / base:>7.2f}"
        )


def wait_for(url: str, server: subprocess.Popen[bytes], log: Path) -> None:
    import urllib.request

    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            if server.poll() is not None:
                raise SystemExit("serve exited:\n" + log.read_text()[-3000:]) from None
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("serve did not come up:\n" + log.read_text()[-3000:])


def main() -> None:
    parser = size_parser(__doc__ or "", max_size=10_000_000, seed=26)
    parser.add_argument("--seconds", type=float, default=0.3, help="timing per row")
    parser.add_argument(
        "--releases",
        type=int,
        default=60,
        help="obfuscated releases posted to INN2 for the fleet part (0: skip it)",
    )
    parser.add_argument("--part-size", type=int, default=384_000, help="bytes per posted article")
    parser.add_argument(
        "--rounds",
        type=int,
        default=5,
        help="fleet rounds, each a run of the bare reader and one of the node (median, spread)",
    )
    parser.add_argument(
        "--fleet-seconds",
        type=float,
        default=3.0,
        help="the least a bare reader's fleet run lasts: the releases are read that many times",
    )
    parser.add_argument(
        "--compress",
        choices=("off", "on", "both"),
        default="off",
        help="COMPRESS DEFLATE for both readers: off (--mode inspect's), on, or both in turn",
    )
    parser.add_argument(
        "--cost",
        type=int,
        default=40,
        help="inspections reported to a real coordinator for its cost per result (0: skip)",
    )
    options = parser.parse_args()
    rng = random.Random(options.seed)
    parse_speed(options, rng)
    if options.releases > 0:
        fleet(options)
    if options.cost > 0:
        coordinator_cost(options)


def parse_speed(options: argparse.Namespace, rng: random.Random) -> None:
    print(f"yEnc decoder here: {yenc.decoder_name()}")
    print("\nReal inputs")
    print(f"  {'input':<48} {'bytes':>9} {'MB/s':>9}")
    for label, parse, data in real_inputs(rng):
        seconds, _steps = timed(parse, data, options.seconds)
        print(f"  {label:<48} {len(data):>9} {len(data) / seconds / 1e6:>9.1f}")
    sizes = [
        size for size in (1_000, 10_000, 100_000, 1_000_000, 10_000_000) if size <= options.max_size
    ]
    print("\nHostile inputs of growing size (ratio: MB/s against the 1 KB case of the same row)")
    print(f"  {'input':<40} {'bytes':>10} {'MB/s':>9} {'steps/byte':>10} {'ratio':>7}")
    for label, parse in HOSTILE:
        base = None
        for size in sizes:
            data = hostile(label.split(",")[0] if label.startswith("yEnc") else label, size, rng)
            seconds, steps = timed(parse, data, options.seconds)
            speed = len(data) / seconds / 1e6
            base = base or speed
            print(
                f"  {label:<40} {len(data):>10} {speed:>9.2f} {steps / len(data):>10.2f} {speed / base:>7.2f}"
            )


if __name__ == "__main__":
    main()
