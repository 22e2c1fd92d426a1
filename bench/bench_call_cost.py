"""The coordinator's CPU per call, one kind of call at a time, beside its baselines.

On one gunicorn (`manage.py serve`'s configuration: core.gunicorn_worker's
BufferingWorker, WEB_WORKERS x WEB_THREADS) serving bench/call_cost_app.py
(the coordinator, plus a bare WSGI callable and a bare Django view), the
kinds run in turn, alternating over --rounds rounds so that the machine's
other load weighs on each alike:

- bare WSGI (fixed bytes), bare Django view (the API's middleware, no
  database, no authentication, no DRF), the project's ping;
- each protocol call alone: lease, heartbeat, finish, group lease, lane next,
  snapshot put; what a call needs first (a lease to heartbeat, finish or
  report to; a lane to ask `next` of) is done with the meter stopped, and so
  is the clean-up after it;
- batches of --sizes segments (files of 25 segments, new articles every time).

Each row: calls, then the CPU per call of gunicorn's tree (master and
workers) and of PostgreSQL's tree, from /proc (simulator/fleet.py's
CpuMeter), over the measured calls only. PostgreSQL is a cluster of the
bench's own (django_setup.private_cluster: made with initdb under var/,
stopped and removed at the end), so its tree serves nothing but the bench. Then the fit of CPU per batch call
over its segments (least squares: the intercept is a batch's fixed cost, the
slope its cost per segment), beside the same fit for `store_files` called
in-process on the same files in the same run (this process's CPU and
PostgreSQL's). --profile KIND records the gunicorn workers with py-spy while
that kind runs and prints the top frames. With pg_stat_statements loaded (the
bench's own cluster loads it), each batch size's statements per call are printed
too (execution, planning, plans, JIT; nested ones apart) beside PostgreSQL's CPU
split into the backends and the rest of its tree. Method and figures:
docs/performance.md, "The coordinator's cost per call".

Run: .venv/bin/python bench/bench_call_cost.py [--seconds 4] [--rounds 2]
     [--sizes 500 5000 20000] [--profile ping batch_20000 --profile-seconds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_fleet import free_port, postmaster_pid
from common import flame_summary, load_groups, py_spy, sql
from django_setup import ROOT, setup

DATABASE = "bench_call_cost"
RANGE_SIZE = 20_000  # the largest batch fits one range
SEGMENTS_PER_FILE = 25
LOAD_RANGES = """
INSERT INTO seed_range (group_id, start_id, end_id, next_id, status, priority, capture,
                        epoch, attempts, headers, files, fragments, error, created_at)
SELECT g.id, 1 + n * %(size)s, (n + 1) * %(size)s, 1 + n * %(size)s, 'queued', 100, false,
       0, 0, 0, 0, 0, '', now()
  FROM news_group g, generate_series(0, %(per_group)s - 1) AS n
"""


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seconds", type=float, default=4.0, help="measured time per kind/round")
    parser.add_argument("--rounds", type=int, default=2, help="alternating windows per kind")
    parser.add_argument("--sizes", type=int, nargs="+", default=[500, 5_000, 20_000])
    parser.add_argument("--tokens", type=int, default=48, help="nodes, one connection each")
    parser.add_argument("--concurrency", type=int, default=8, help="calls in flight at most")
    parser.add_argument("--repeat", type=int, default=10, help="calls per node per phase, loops")
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--ranges-per-group", type=int, default=100)
    parser.add_argument("--workers", type=int, default=None, help="gunicorn workers (WEB_WORKERS)")
    parser.add_argument("--threads", type=int, default=None, help="threads each (WEB_THREADS)")
    parser.add_argument("--kinds", nargs="*", default=None, help="only these kinds")
    parser.add_argument("--profile", nargs="*", default=[], help="py-spy the workers during these")
    parser.add_argument("--profile-seconds", type=float, default=20.0)
    parser.add_argument(
        "--other-env",
        nargs="*",
        default=[],
        metavar="NAME=VALUE",
        help="a second gunicorn with these settings, for the --other-kinds",
    )
    parser.add_argument(
        "--other-kinds", nargs="*", default=[], help="kinds also run on the second gunicorn"
    )
    parser.add_argument(
        "--other-root",
        type=Path,
        default=None,
        help="the second gunicorn serves the code of this checkout (e.g. an export of main: "
        "`git archive main | tar -x -C DIR`), on this one's database",
    )
    return parser.parse_args()


def load(groups: int, ranges_per_group: int, nodes: int) -> list[str]:
    """Empty the coordinator's tables, plan the ranges, issue `nodes` tokens."""
    from indexer.services import issue_token
    from leases import services as leases

    sql("TRUNCATE news_group, seed_node, rate_bucket RESTART IDENTITY CASCADE")
    load_groups("alt.binaries.cost.", groups)
    sql(LOAD_RANGES, {"size": RANGE_SIZE, "per_group": ranges_per_group})
    leases.rebuild_lane_work()
    sql("VACUUM ANALYZE seed_range")
    tokens = [issue_token(f"cost-{i}")[1] for i in range(nodes)]
    from django.db import connection

    connection.close()
    return tokens


def serve(
    args: argparse.Namespace, port: int, log: Path, more_env: dict[str, str], root: Path = ROOT
) -> subprocess.Popen[bytes]:
    """gunicorn as `manage.py serve` runs it, with bench/call_cost_app.py as the app
    (and `more_env`'s settings), serving the code of `root` (this checkout's by default)."""
    from django.conf import settings

    from core.management.commands.serve import gunicorn_arguments

    gunicorn = shutil.which("gunicorn", path=os.path.dirname(sys.executable))
    assert gunicorn is not None, "gunicorn is not installed: run `make install`"
    workers = args.workers or settings.WEB_WORKERS
    threads = args.threads or settings.WEB_THREADS
    command = gunicorn_arguments(gunicorn, f"127.0.0.1:{port}", workers, threads, 120)
    command[1] = "call_cost_app"
    command += ["--pythonpath", f"{root},{root / 'bench'}"]
    metrics = ROOT / "var" / f"bench_call_cost-prometheus-{port}"
    shutil.rmtree(metrics, ignore_errors=True)
    metrics.mkdir(parents=True)
    env = {
        **os.environ,
        "EMBEDDED_DATABASE_NAME": DATABASE,
        "PROMETHEUS_MULTIPROC_DIR": str(metrics),
        "DATA_DIR": str(ROOT / "var"),  # the database: EMBEDDED_DATABASE_DIR, the bench's
        **more_env,
    }
    server = subprocess.Popen(
        command, cwd=root, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT
    )
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=2).close()
            return server
        except OSError:
            if server.poll() is not None:
                raise SystemExit("gunicorn exited:\n" + log.read_text()[-3000:]) from None
            time.sleep(0.3)
    server.terminate()
    raise SystemExit("gunicorn did not come up:\n" + log.read_text()[-3000:])


class Fleet:
    """One keep-alive connection per token, at most `concurrency` calls in flight."""

    def __init__(self, url: str, tokens: list[str], concurrency: int) -> None:
        from simulator.fleet import Connection

        self.conns = [Connection(url, token, 120.0) for token in tokens]
        self.gate = asyncio.Semaphore(concurrency)
        self.refused = 0  # 429/503 answers (counted as calls: the coordinator paid for them)
        self.rng = random.Random(27)

    async def call(self, i: int, method: str, path: str, body: Any = None, **kw: Any) -> Any:
        """The answer's status and JSON body; a 429/503 is waited out and asked again."""
        data = kw.get("raw", b"" if body is None else json.dumps(body).encode())
        content_type = kw.get("content_type", "application/json")
        while True:
            async with self.gate:
                answer = await self.conns[i].request(method, path, data, content_type)
            if answer.status in (429, 503):
                self.refused += 1
                await asyncio.sleep(answer.retry_after(1.0))
                continue
            if answer.status >= 300:
                raise SystemExit(f"{method} {path}: {answer.status} {answer.body[:300]!r}")
            return answer.json() if answer.body else None

    async def each(
        self, step: Callable[[int, Any], Awaitable[Any]], states: list[Any]
    ) -> list[Any]:
        return list(await asyncio.gather(*(step(i, s) for i, s in enumerate(states))))


# --- the kinds: (prepare, measured, clean-up), each per node -------------------------


@dataclass
class Kind:
    name: str
    measured: Callable[[Fleet, int, Any], Awaitable[int]]  # -> calls made
    prepare: Callable[[Fleet, int], Awaitable[Any]] | None = None
    cleanup: Callable[[Fleet, int, Any], Awaitable[None]] | None = None
    segments: int = 0  # a batch's, for the fit


def loop(method: str, path: str, repeat: int) -> Callable[[Fleet, int, Any], Awaitable[int]]:
    async def measured(fleet: Fleet, i: int, _state: Any) -> int:
        for _ in range(repeat):
            await fleet.call(i, method, path)
        return repeat

    return measured


async def lease(fleet: Fleet, i: int, _state: Any = None) -> Any:
    offer = await fleet.call(i, "POST", "/api/v1/ranges/lease")
    assert offer["lease"] is not None, "the bench ran out of queued ranges: --ranges-per-group"
    return offer["lease"]


async def lease_measured(fleet: Fleet, i: int, state: Any) -> int:
    state["lease"] = await lease(fleet, i)
    return 1


async def release(fleet: Fleet, i: int, held: Any) -> None:
    held = held.get("lease", held)
    body = {"epoch": held["epoch"], "uncounted": True}
    await fleet.call(i, "POST", f"/api/v1/ranges/{held['id']}/release", body)


async def finish(fleet: Fleet, i: int, held: Any) -> None:
    await fleet.call(i, "POST", f"/api/v1/ranges/{held['id']}/finish", {"epoch": held["epoch"]})


def heartbeat(repeat: int) -> Callable[[Fleet, int, Any], Awaitable[int]]:
    async def measured(fleet: Fleet, i: int, held: Any) -> int:
        for _ in range(repeat):
            path = f"/api/v1/ranges/{held['id']}/heartbeat"
            await fleet.call(i, "POST", path, {"epoch": held["epoch"]})
        return repeat

    return measured


async def finish_measured(fleet: Fleet, i: int, held: Any) -> int:
    await finish(fleet, i, held)
    held["finished"] = True
    return 1


async def finish_unless_finished(fleet: Fleet, i: int, held: Any) -> None:
    if not held.get("finished"):
        await finish(fleet, i, held)


def batch(segments: int, columns: bool = False) -> tuple[Any, Any]:
    """A batch's kind: its files as File objects, or (`columns`) in the columnar form
    the agent sends (docs/api.md); the body is the fleet simulator's."""
    from simulator.fleet import Profile, batch_body, make_files

    profile = Profile(files=segments // SEGMENTS_PER_FILE, segments=SEGMENTS_PER_FILE)

    async def prepare(fleet: Fleet, i: int) -> Any:
        held = await lease(fleet, i)
        files, articles = make_files(f"cost-{i}", fleet.rng, held["start"], profile)
        body = batch_body(files, held["epoch"], held["start"] + articles, articles, columns)
        held["body"] = json.dumps(body).encode()
        return held

    async def measured(fleet: Fleet, i: int, held: Any) -> int:
        await fleet.call(i, "POST", f"/api/v1/ranges/{held['id']}/batch", raw=held["body"])
        return 1

    return prepare, measured


async def lane_lease(fleet: Fleet, i: int, _state: Any = None) -> Any:
    offer = await fleet.call(i, "POST", "/api/v1/groups/lease", {"lane": "history"})
    assert offer["lease"] is not None, "no lane to hand out: --groups"
    lane = offer["lease"]
    return {
        "path": f"/api/v1/groups/{lane['group']['id']}/lanes/history",
        "epoch": lane["epoch"],
        "head": {
            "format": 1,
            "group": lane["group"]["name"],
            "rules_version": lane["rules"]["version"],
            "max_open": 200_000,
            "counters": {},
        },
    }


async def lane_lease_measured(fleet: Fleet, i: int, state: Any) -> int:
    state["lane"] = await lane_lease(fleet, i)
    return 1


async def lane_release(fleet: Fleet, i: int, state: Any) -> None:
    lane = state.get("lane", state)
    work = state.get("range")
    if work is not None:
        body = {"epoch": work["epoch"], "uncounted": True}
        await fleet.call(i, "POST", f"/api/v1/ranges/{work['id']}/release", body)
    await fleet.call(i, "POST", f"{lane['path']}/release", {"epoch": lane["epoch"]})


async def lane_next_measured(fleet: Fleet, i: int, lane: Any) -> int:
    answer = await fleet.call(i, "POST", f"{lane['path']}/next", {"epoch": lane["epoch"]})
    lane["range"] = answer["range"]
    return 1


def window_snapshot(lane: Any) -> bytes:
    """A window as the agent serializes it (docs/api.md): the lease's header, then
    about 16 KiB of open files in the range just read (as simulator/fleet.py's)."""
    import gzip

    start, end = lane["range"]["start"], lane["range"]["end"]
    lines = [json.dumps(lane["head"]).encode()]
    for n in range(200):
        entry = {
            "subject": f'"sim-{n}.rar" yEnc (1/2)',
            "poster": "sim <sim@example.com>",
            "date": 1_700_000_000,
            "total": 2,
            "segments": [[1, random.randint(start, end), f"<{os.urandom(24).hex()}@sim>", 500]],
        }
        lines.append(json.dumps(entry).encode())
    return gzip.compress(b"\n".join(lines) + b"\n", 1)


def snapshot_put(repeat: int) -> Callable[[Fleet, int, Any], Awaitable[int]]:
    async def measured(fleet: Fleet, i: int, lane: Any) -> int:
        window = window_snapshot(lane)
        for _ in range(repeat):
            path = f"{lane['path']}/snapshot?epoch={lane['epoch']}&next={lane['range']['end'] + 1}"
            await fleet.call(i, "PUT", path, raw=window, content_type="application/gzip")
        return repeat

    return measured


async def lane_with_range(fleet: Fleet, i: int) -> Any:
    lane = await lane_lease(fleet, i)
    await lane_next_measured(fleet, i, lane)
    return lane


def kinds(args: argparse.Namespace) -> list[Kind]:
    r = args.repeat
    found = [
        Kind("bare_wsgi", loop("GET", "/bench/bare-wsgi", r)),
        Kind("bare_view", loop("GET", "/api/v1/bench/bare-view", r)),
        Kind("ping", loop("GET", "/api/v1/ping", r)),
        Kind("lease", lease_measured, lambda f, i: asyncio.sleep(0, {}), release),
        Kind("heartbeat", heartbeat(r), lease, release),
        Kind("finish", finish_measured, lease, finish_unless_finished),
        Kind("group_lease", lane_lease_measured, lambda f, i: asyncio.sleep(0, {}), lane_release),
        Kind("lane_next", lane_next_measured, lane_lease, lane_release),
        Kind("snapshot_put", snapshot_put(max(r // 5, 1)), lane_with_range, lane_release),
    ]
    for size in args.sizes:
        prepare, measured = batch(size)
        found.append(Kind(f"batch_{size}", measured, prepare, finish, segments=size))
    for size in args.sizes:
        prepare, measured = batch(size, columns=True)
        found.append(Kind(f"columns_{size}", measured, prepare, finish, segments=size))
    if args.kinds:
        found = [k for k in found if k.name in args.kinds]
    return found


# --- measuring ----------------------------------------------------------------------


# Per statement: calls, execution ms, planning ms, JIT ms (its four steps), plans made.
StatementTimes = dict[tuple[int, bool], list[float]]
STATEMENT_TIMES = """
SELECT queryid, toplevel, calls, total_exec_time, total_plan_time,
       jit_generation_time + jit_inlining_time + jit_optimization_time + jit_emission_time,
       plans, regexp_replace(left(query, 300), '\\s+', ' ', 'g')
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
   AND query NOT LIKE '%pg_stat_statements%'
"""


class StatementMeter:
    """pg_stat_statements of the bench's database, read on a connection of its own (the
    windows run in the event loop, where Django's connection may not be used)."""

    def __init__(self) -> None:
        import psycopg
        from django.db import connection

        params = connection.get_connection_params()
        keep = {"host", "port", "user", "password", "dbname"}
        self.conn = psycopg.connect(**{k: v for k, v in params.items() if k in keep},
                                    autocommit=True)  # fmt: skip
        self.texts: dict[tuple[int, bool], str] = {}

    def read(self) -> StatementTimes:
        found: StatementTimes = {}
        for queryid, toplevel, *times, query in self.conn.execute(STATEMENT_TIMES):
            found[(queryid, toplevel)] = [float(t) for t in times]
            self.texts.setdefault((queryid, toplevel), query)
        return found


@dataclass
class Tally:
    calls: int = 0
    seconds: float = 0.0
    ticks: Counter[str] | None = None
    statements: StatementTimes | None = None  # summed over the measured steps

    def add(self, calls: int, seconds: float, ticks: dict[str, int]) -> None:
        self.calls += calls
        self.seconds += seconds
        self.ticks = (self.ticks or Counter()) + Counter(ticks)

    def add_statements(self, before: StatementTimes, after: StatementTimes) -> None:
        summed = self.statements if self.statements is not None else {}
        for key, times in after.items():
            was = before.get(key, [0.0] * len(times))
            moved = [a - b for a, b in zip(times, was, strict=True)]
            if moved[0] > 0:
                summed[key] = [a + b for a, b in zip(summed.get(key, [0.0] * len(times)), moved, strict=True)]  # fmt: skip
        self.statements = summed

    def statement_ms(self, toplevel: bool = True) -> tuple[float, float, float]:
        """Per call: execution, planning and JIT ms of the top-level (or nested)
        statements."""
        rows = [t for (_, top), t in (self.statements or {}).items() if top == toplevel]
        n = max(self.calls, 1)
        return tuple(sum(t[i] for t in rows) / n for i in (1, 2, 3))  # type: ignore[return-value]

    def ms_per_call(self, tree: str, hz: int) -> float:
        return (self.ticks or Counter())[tree] / hz / max(self.calls, 1) * 1000


async def window(
    fleet: Fleet,
    kind: Kind,
    seconds: float,
    meter: Any,
    tally: Tally,
    statements: StatementMeter | None = None,
) -> None:
    """Phases of every node's measured step (meter running), each between its untimed
    preparation and clean-up, until `seconds` of measured time have passed; with
    `statements`, pg_stat_statements read before and after each measured step (outside
    the meter) and the difference added to the tally's."""
    spent = 0.0
    nodes = len(fleet.conns)
    while spent < seconds:
        if kind.prepare is not None:
            states = await fleet.each(lambda i, _s: kind.prepare(fleet, i), [None] * nodes)  # type: ignore[misc]
        else:
            states = [None] * nodes
        first = statements.read() if statements is not None else {}
        before, started = meter.sample(), time.monotonic()
        calls = await fleet.each(lambda i, s: kind.measured(fleet, i, s), states)
        after, elapsed = meter.sample(), time.monotonic() - started
        if statements is not None:
            tally.add_statements(first, statements.read())
        spent += elapsed
        tally.add(sum(calls), elapsed, {k: after[k] - before[k] for k in after})
        if kind.cleanup is not None:
            await fleet.each(lambda i, s: kind.cleanup(fleet, i, s), states)  # type: ignore[misc]


def backend_meter(roots: dict[str, int]) -> Any:
    """CpuMeter over `roots` that also counts, as "backends", the PostgreSQL processes
    serving this bench's database (their title names it); the rest of PostgreSQL's
    tree is its background work (WAL writer, checkpointer, autovacuum). A backend that
    exits (a connection closed after DB_CONN_MAX_AGE) takes its CPU to the
    postmaster's reaped children, counted as background: "backend_exits" counts them,
    and a window with one has its backends' share too low."""
    from simulator.fleet import CpuMeter, _ticks, process_tree

    class BackendMeter(CpuMeter):
        live: set[int] = set()
        exits = 0

        def sample(self) -> dict[str, int]:
            ticks = super().sample()
            backends = [p for p in process_tree(self.roots["postgres"]) if is_backend(p)]
            self.exits += len(self.live - set(backends))
            self.live = set(backends)
            ticks["backends"] = sum(_ticks(p) for p in backends)
            ticks["backend_exits"] = self.exits
            return ticks

    return BackendMeter(roots)


def is_backend(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return f" {DATABASE} ".encode() in cmdline.read()
    except OSError:  # gone meanwhile
        return False


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least squares y = a + b x: (a, b)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx if sxx else 0.0
    return my - b * mx, b


def in_process(sizes: list[int], seconds: float, meter: Any) -> dict[int, Tally]:
    """store_files called here, in a transaction per batch, on files like the batches':
    this process's CPU (as "client") and PostgreSQL's tree. One batch of each size
    first, untimed (this process's first statements are planned and prepared)."""
    from django.db import transaction

    from catalog.services import store_files
    from catalog.validation import validate_files
    from simulator.fleet import Profile, make_files

    group_id = sql("SELECT min(id) FROM news_group")[0][0]
    rng = random.Random(28)
    tallies = {size: Tally() for size in sizes}
    article = 10**12  # far from the ranges' articles
    for size in sizes:
        spent, warm = 0.0, False
        profile = Profile(files=size // SEGMENTS_PER_FILE, segments=SEGMENTS_PER_FILE)
        while spent < seconds:
            files, articles = make_files("inproc", rng, article, profile)
            article += articles
            reports = validate_files(files, "files", len(files))
            before, cpu, started = meter.sample(), time.process_time(), time.monotonic()
            with transaction.atomic():
                store_files(group_id, None, reports[:-1], reports[-1:])
            after, elapsed = meter.sample(), time.monotonic() - started
            if not warm:
                warm = True
                continue
            spent += elapsed
            ticks = {"postgres": after["postgres"] - before["postgres"]}
            ticks["client"] = round((time.process_time() - cpu) * meter.hz)
            tallies[size].add(1, elapsed, ticks)
    return tallies


def body_breakdown(size: int, repeat: int = 10) -> list[list[str]]:
    """CPU of this process per batch body of `size` segments, by step of the view before
    store_files: the JSON decoding (the standard library's, as LimitedJSONParser does,
    and the two faster decoders when installed) and the files' validation."""
    import importlib

    from catalog.validation import validate_files
    from simulator.fleet import Profile, make_files

    profile = Profile(files=size // SEGMENTS_PER_FILE, segments=SEGMENTS_PER_FILE)
    files, articles = make_files("decode", random.Random(29), 1, profile)
    body = json.dumps({"epoch": 1, "next": articles + 1, "headers": articles, "files": files})

    def cpu_ms(step: Callable[[], Any]) -> float:
        step()
        started = time.process_time()
        for _ in range(repeat):
            step()
        return (time.process_time() - started) / repeat * 1000

    raw = body.encode()
    rows = [[f"json.loads ({len(raw):,} bytes)", f"{cpu_ms(lambda: json.loads(raw.decode())):.1f}"]]
    for name, call in (("orjson", "loads"), ("msgspec.json", "decode")):
        try:
            decode = getattr(importlib.import_module(name), call)
        except ImportError:
            continue
        rows.append([f"{name}.{call}", f"{cpu_ms(lambda d=decode: d(raw)):.1f}"])  # type: ignore[misc]
    rows.append(["validate_files", f"{cpu_ms(lambda: validate_files(files, 'files', 10**6)):.1f}"])
    return rows


def profile(
    loop: asyncio.AbstractEventLoop,
    kind: Kind,
    fleet: Fleet,
    server: subprocess.Popen[bytes],
    seconds: float,
) -> None:
    """py-spy on gunicorn's tree while `kind` runs: top frames, inclusive and self, of
    the threads serving a request (the main loop and idle threads left out)."""
    from simulator.fleet import CpuMeter

    out = ROOT / "var" / f"bench_call_cost-{kind.name}.txt"
    recorder = py_spy(out, server.pid, "--subprocesses", "--rate", "200",
                      "--duration", str(int(seconds)))  # fmt: skip
    meter = CpuMeter({"gunicorn": server.pid})
    deadline = time.monotonic() + seconds
    while recorder.poll() is None and time.monotonic() < deadline + 5:
        loop.run_until_complete(window(fleet, kind, 1.0, meter, Tally()))
    recorder.wait(60)
    print(f"\npy-spy of gunicorn's workers during {kind.name} ({out}), samples serving requests:")
    print(flame_summary(out.read_text(), serving_request))


def serving_request(frames: list[str]) -> bool:
    return any("handle_request" in f or "get_response" in f for f in frames)


STATEMENTS = """
SELECT calls, total_exec_time + total_plan_time AS ms, rows,
       regexp_replace(left(query, 400), '\\s+', ' ', 'g') AS query
  FROM pg_stat_statements
 WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND toplevel
 ORDER BY total_exec_time + total_plan_time DESC
 LIMIT %(top)s
"""


def statements_start() -> bool:
    """pg_stat_statements emptied, when the server loads it (the bench's own cluster
    does: django_setup.load_statement_statistics; a DATABASE_URL server may not)."""
    from django.db import DatabaseError, transaction

    try:
        with transaction.atomic():
            sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            sql("SELECT pg_stat_statements_reset()")
        return True
    except DatabaseError as error:
        print(f"pg_stat_statements is not available ({str(error).strip()}): no statement table")
        return False


def statements_report(top: int = 15) -> None:
    """The run's statements on this database, by the time PostgreSQL spent in them."""
    from simulator.fleet import table

    rows = sql(STATEMENTS, {"top": top})
    total = sum(r[1] for r in rows) or 1.0
    print("\npg_stat_statements, the whole run (every kind), by PostgreSQL's time:")
    print(table(["calls", "ms", "share of these", "ms/call", "rows", "statement"],
                [[f"{c:,}", f"{ms:,.0f}", f"{ms / total:.1%}", f"{ms / max(c, 1):.3f}", f"{r:,}",
                  "`" + q[:110].replace("|", "\\|") + "`"] for c, ms, r, q in rows]))  # fmt: skip


def statements_by_size(
    tallies: dict[str, Tally], sizes: list[int], hz: int, texts: dict[tuple[int, bool], str]
) -> None:
    """Where PostgreSQL's CPU per batch goes, by size: its backends' and its background
    processes' CPU beside the time pg_stat_statements gives the statements (execution,
    planning, JIT; its times are wall clock, waits for a CPU or a lock included), the
    same fitted over the sizes (the fixed part of each), and each batch size's
    statements per batch call. A nested statement (a trigger's, a function's) is
    counted inside its top-level statement's time too."""
    from simulator.fleet import table

    for form in ("batch", "columns"):
        found = [(size, tallies[f"{form}_{size}"]) for size in sizes if f"{form}_{size}" in tallies]
        if not found or not all(t.statements for _, t in found):
            continue
        columns = {
            "backends' CPU": lambda t: t.ms_per_call("backends", hz),
            "background CPU": lambda t: t.ms_per_call("postgres", hz) - t.ms_per_call("backends", hz),
            "statements: execution": lambda t: t.statement_ms()[0],
            "planning": lambda t: t.statement_ms()[1],
            "JIT": lambda t: t.statement_ms()[2],
            "the rest of the backends' CPU": lambda t: t.ms_per_call("backends", hz) - sum(t.statement_ms()),
            "backends exited": lambda t: (t.ticks or Counter())["backend_exits"],
        }  # fmt: skip
        rows = [[f"{size:,}", *(f"{f(t):.2f}" for f in columns.values())] for size, t in found]
        if len(found) > 1:
            fits = [fit([(size, f(t)) for size, t in found]) for f in columns.values()]
            rows.append(["fixed (fit)", *(f"{a:.2f}" for a, _ in fits)])
            rows.append(["µs per segment (fit)", *(f"{b * 1000:.2f}" for _, b in fits)])
        print(f"\nPostgreSQL per {form} call, ms (CPU from /proc; statements' times from "
              "pg_stat_statements, top level, wall clock):")  # fmt: skip
        print(table(["segments", *columns], rows))
        for size, t in found:
            n = max(t.calls, 1)
            ranked = sorted((t.statements or {}).items(), key=lambda kv: -(kv[1][1] + kv[1][2]))
            print(f"\n{form}_{size}: pg_stat_statements per batch call ({t.calls} calls; "
                  "nested: run by a trigger or a function, inside a top-level one's time):")  # fmt: skip
            print(table(
                ["level", "calls", "plans", "execution ms", "planning ms", "JIT ms", "statement"],
                [["top" if top else "nested", f"{v[0] / n:.2f}", f"{v[4] / n:.2f}",
                  f"{v[1] / n:.3f}", f"{v[2] / n:.3f}", f"{v[3] / n:.3f}",
                  "`" + texts.get((qid, top), "?")[:100].replace("|", "\\|") + "`"]
                 for (qid, top), v in ranked[:14]],
            ))  # fmt: skip


def quotient(a: float, b: float) -> str:
    """a ÷ b to two places; a dash when b is not above zero (at tiny sizes a CPU
    figure can be no tick at all, or a fit's slope zero or below)."""
    return f"{a / b:.2f}" if b > 0 else "- (nothing to divide by: too few CPU ticks)"


def report(
    tallies: dict[str, Tally],
    local: dict[int, Tally],
    sizes: list[int],
    hz: int,
    args_concurrency: int,
) -> None:
    from simulator.fleet import table

    rows = []
    for name, t in tallies.items():
        web, db = t.ms_per_call("gunicorn", hz), t.ms_per_call("postgres", hz)
        rows.append([name, t.calls, f"{t.calls / t.seconds:,.0f}", f"{web:.2f}", f"{db:.2f}",
                     f"{web + db:.2f}", f"{t.ticks['machine'] / hz / t.seconds:.2f}" if t.ticks else "-"])  # fmt: skip
    header = ["kind", "calls", "calls/s", "gunicorn ms/call", "postgres ms/call", "total ms/call",
              "machine cores busy"]  # fmt: skip
    print(table(header, rows))

    def per_call(t: Tally, tree: str) -> float:
        return t.ms_per_call(tree, hz) + t.ms_per_call("postgres", hz)

    def ratio(a: str, b: str) -> str:
        if a not in tallies or b not in tallies:
            return "-"
        return quotient(per_call(tallies[a], "gunicorn"), per_call(tallies[b], "gunicorn"))

    print()
    print(f"ping ÷ bare Django view (coordinator CPU per call): {ratio('ping', 'bare_view')}"
          " (goal ≤ 1.5)")  # fmt: skip
    print(f"bare Django view ÷ bare WSGI: {ratio('bare_view', 'bare_wsgi')}")
    for name in tallies:
        if " (" in name:  # the same kind on the second gunicorn
            base = name.split(" (")[0]
            print(f"{base} ÷ {name} (coordinator CPU per call): {ratio(base, name)}")
    batches = [(s, tallies[f"batch_{s}"]) for s in sizes if f"batch_{s}" in tallies]
    if len(batches) < 2:
        return
    http = fit([(s, per_call(t, "gunicorn")) for s, t in batches])
    here = fit([(s, per_call(local[s], "client")) for s in sizes])
    web = fit([(s, t.ms_per_call("gunicorn", hz)) for s, t in batches])
    db = fit([(s, t.ms_per_call("postgres", hz)) for s, t in batches])
    print()
    print(table(
        ["CPU per batch = fixed + per segment x segments", "fixed ms", "µs per segment"],
        [["through HTTP: gunicorn + PostgreSQL", f"{http[0]:.2f}", f"{http[1] * 1000:.1f}"],
         ["  of which gunicorn", f"{web[0]:.2f}", f"{web[1] * 1000:.1f}"],
         ["  of which PostgreSQL", f"{db[0]:.2f}", f"{db[1] * 1000:.1f}"],
         ["store_files in-process: this process + PostgreSQL", f"{here[0]:.2f}", f"{here[1] * 1000:.1f}"]],
    ))  # fmt: skip
    columnar = [(s, tallies[f"columns_{s}"]) for s in sizes if f"columns_{s}" in tallies]
    if len(columnar) > 1:
        cols = fit([(s, per_call(t, "gunicorn")) for s, t in columnar])
        print(f"columnar batches through HTTP: fixed {cols[0]:.2f} ms, "
              f"{cols[1] * 1000:.1f} µs per segment (÷ File objects: {quotient(cols[1], http[1])})")  # fmt: skip
    print()
    backends = fit([(s, t.ms_per_call("backends", hz)) for s, t in batches])
    print(f"a batch's fixed cost: {http[0]:.2f} ms: gunicorn {web[0]:.2f}, PostgreSQL "
          f"{db[0]:.2f} (its backends {backends[0]:.2f}, its background work "
          f"{db[0] - backends[0]:.2f}) (goal ≤ 3 ms)")  # fmt: skip
    print(f"per segment, HTTP ÷ store_files in-process: {quotient(http[1], here[1])} (goal ≤ 2)")
    largest, t = (columnar or batches)[-1]  # the form the agent sends
    cores = os.cpu_count() or 1
    per_batch = per_call(t, "gunicorn")
    bound = f"{cores / per_batch * 1000 * largest:,.0f}" if per_batch > 0 else "- (no CPU tick)"
    print(f"saturation bound at {largest:,} segments a batch ({'columnar' if columnar else 'File objects'}): {cores} cores ÷ "
          f"{per_batch:.1f} ms = {bound} segments/s (goal ≥ 150,000)")  # fmt: skip
    print(f"measured at {largest:,} segments a batch ({args_concurrency} in flight, this client "
          f"on the same cores): {t.calls / t.seconds * largest:,.0f} segments/s")  # fmt: skip
    for s in sizes:
        lt = local[s]
        print(f"store_files in-process, {s:,} segments: {per_call(lt, 'client'):.1f} ms CPU "
              f"({lt.calls} batches)")  # fmt: skip


def main() -> None:
    args = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # stop the server on the way out
    setup(DATABASE, private=True)  # PostgreSQL's CPU is metered: a cluster of its own
    from simulator.fleet import table

    tokens = load(args.groups, args.ranges_per_group, args.tokens)
    statements = statements_start()
    breakdown = body_breakdown(max(args.sizes))
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} "
          f"(uptime); {args.tokens} nodes, {args.concurrency} calls in flight; "
          f"{args.rounds} rounds of {args.seconds:g} s per kind, alternating", flush=True)  # fmt: skip
    port = free_port()
    server = serve(args, port, ROOT / "var" / "bench_call_cost-serve.log", {})
    servers = [server]
    roots = {"postgres": postmaster_pid(), "client": os.getpid()}
    meter = backend_meter({"gunicorn": server.pid, **roots})
    statement_meter = StatementMeter() if statements else None
    # One loop for the whole run, its connections kept alive across windows; it is not
    # running between them, so Django may be called there (in_process).
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    fleet = Fleet(f"http://127.0.0.1:{port}", tokens, args.concurrency)
    chosen = kinds(args)
    tallies = {k.name: Tally() for k in chosen}
    other: tuple[Fleet, Any] | None = None
    label = " ".join(args.other_env + ([f"code of {args.other_root}"] if args.other_root else []))
    if args.other_env or args.other_root:
        port = free_port()
        more = dict(item.split("=", 1) for item in args.other_env)
        log = ROOT / "var" / "bench_call_cost-serve-other.log"
        servers.append(serve(args, port, log, more, args.other_root or ROOT))
        other = (Fleet(f"http://127.0.0.1:{port}", tokens, args.concurrency),
                 backend_meter({"gunicorn": servers[-1].pid, **roots}))  # fmt: skip
        tallies.update({f"{k} ({label})": Tally() for k in args.other_kinds})
    local: dict[int, Tally] = {s: Tally() for s in args.sizes}
    try:
        for round_ in range(args.rounds):
            for kind in chosen:
                runs = [(kind.name, fleet, meter)]
                if other is not None and kind.name in args.other_kinds:
                    runs.append((f"{kind.name} ({label})", *other))
                for name, on, metered in runs:
                    loop.run_until_complete(window(on, kind, args.seconds, metered, tallies[name],
                                                   statement_meter))  # fmt: skip
                    print(f"round {round_ + 1} {name}: {tallies[name].calls} calls", flush=True)
            for size, t in in_process(args.sizes, args.seconds, meter).items():
                local[size].add(t.calls, t.seconds, dict(t.ticks or {}))
        for name in args.profile:
            chosen_kind = next(k for k in chosen if k.name == name)
            profile(loop, chosen_kind, fleet, server, args.profile_seconds)
    finally:
        for running in servers:
            running.terminate()
        for running in servers:
            running.wait(60)
    print(f"\nload at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"refused (429/503) and asked again: {fleet.refused}\n")  # fmt: skip
    report(tallies, local, args.sizes, meter.hz, args.concurrency)
    print(f"\nIn this process, a body of {max(args.sizes):,} segments, CPU ms (before the run):")
    print(table(["step", "ms"], breakdown))
    if statement_meter is not None:
        statements_by_size(tallies, args.sizes, meter.hz, statement_meter.texts)
    if statements:
        statements_report()


if __name__ == "__main__":
    main()
