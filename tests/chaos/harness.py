"""A fleet on real PostgreSQL, gunicorn and INN2 for the fault suite, and its outcome.

Each run plans the same posts, runs the same agents until every range is done,
and reads back what the comparison needs: the catalog file by file and the
counters (per range, per group, the catalog summary, the header rollup).
A fault run is compared with an undisturbed reference run of the same posts.
"""

from __future__ import annotations

import fcntl
import json
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg

from tests.chaos import clients
from tests.support.fleet import LEASE_TTL_SECONDS, Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts

GROUPS = ("alt.binaries.chaos.a", "alt.binaries.chaos.b")
PLANNED_DAYS = 10
RANGE_ARTICLES = 100
RUN_TIMEOUT = 150.0
RESTORES = 3  # snapshot GETs each run makes (the window agent restarted until then)


def post_articles(inn: InnServer) -> None:
    for group in GROUPS:
        inn.create_group(group)
    articles, _ = make_binary_posts(
        GROUPS, seed=13, releases=40, days=PLANNED_DAYS, incomplete_share=0.2, text_posts=80
    )
    result = inn.post_articles(None, articles)
    assert not result.refused, list(result.refused.items())[:3]


class ChaosFleet(Fleet):
    """A Fleet whose coordinator runs the fault suite's settings and environment."""

    def __init__(self, *args: Any, extra_env: dict[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.extra_env = extra_env
        self.agent_env: dict[str, dict[str, str]] = {}  # by agent name (a skewed clock)

    def start_agent(
        self, name: str, *args: str, env_extra: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        log = self.workdir / f"{name}.log"
        if log.exists():  # an agent started again: keep the earlier process's log
            log.rename(self.workdir / f"{name}.{len(list(self.workdir.glob(name + '.*.log')))}.log")
        return super().start_agent(
            name, *args, env_extra={**self.agent_env.get(name, {}), **(env_extra or {})}
        )

    def env(self, **extra: str) -> dict[str, str]:
        return super().env(
            **{"DJANGO_SETTINGS_MODULE": "tests.chaos.settings", **self.extra_env, **extra}
        )


# The catalog, file by file: every column a batch decides, segments sorted.
CATALOG_SQL = """
SELECT g.name, f.subject, f.poster, f.name, f.total, f.date, f.segments, f.bytes,
       f.complete, f.conflicts,
       (SELECT array_agg(x ORDER BY x) FROM unnest(f.parts, f.articles, f.sizes, f.message_ids)
            AS u(p, a, s, m), LATERAL (SELECT ROW(p, a, s, m)::text) AS t(x))
  FROM catalog_file f JOIN news_group g ON g.id = f.group_id
"""
RANGE_SQL = """
SELECT g.name, r.start_id, r.end_id, r.status, r.next_id, r.headers
  FROM seed_range r JOIN news_group g ON g.id = r.group_id
"""
SUMMARY_SQL = """
SELECT g.name, sum(s.files), sum(s.complete), sum(s.segments), sum(s.bytes), sum(s.conflicts)
  FROM group_catalog_summary s JOIN news_group g ON g.id = s.group_id GROUP BY g.name
"""
ROLLUP_SQL = """
SELECT g.name, sum(h.headers) FROM header_rollup h JOIN news_group g ON g.id = h.group_id
 GROUP BY g.name
"""


@dataclass
class Outcome:
    catalog: list[tuple[Any, ...]]
    ranges: list[tuple[Any, ...]]
    summary: list[tuple[Any, ...]]
    rollup: list[tuple[Any, ...]]
    extra: dict[str, Any] = field(default_factory=dict)

    def comparable(self) -> dict[str, Any]:
        return {
            "catalog": sorted(map(repr, self.catalog)),
            "ranges": sorted(self.ranges),
            "summary": sorted(self.summary),
            "rollup": sorted(self.rollup),
        }


def read_outcome(fleet: Fleet) -> Outcome:
    return Outcome(
        catalog=fleet.sql(CATALOG_SQL),
        ranges=fleet.sql(RANGE_SQL),
        summary=fleet.sql(SUMMARY_SQL),
        rollup=fleet.sql(ROLLUP_SQL),
    )


def assert_same_outcome(run: Outcome, reference: Outcome, *, reread: bool = False) -> None:
    """The run's catalog and counters equal the reference's. With `reread`, the
    throughput rollup may count more (headers read again, e.g. from an older
    snapshot after a refused one: docs/reliability.md), never fewer."""
    got, want = run.comparable(), reference.comparable()
    assert want["catalog"], "the reference run catalogued nothing"
    if reread:
        counted = {group: int(n) for group, n in run.rollup}
        for group, headers in reference.rollup:
            assert counted.get(group, 0) >= headers, (run.rollup, reference.rollup)
        del got["rollup"], want["rollup"]
    for key in want:
        missing = [row for row in want[key] if row not in got[key]]
        extra = [row for row in got[key] if row not in want[key]]
        assert not missing and not extra, f"{key}: missing {missing[:3]}, extra {extra[:3]}"


Database = Callable[[], AbstractContextManager[tuple[str, dict[str, Any]]]]


@contextmanager
def running_fleet(
    inn: InnServer,
    workdir: Path,
    extra_env: dict[str, str] | None = None,
    database: Database | None = None,
) -> Iterator[ChaosFleet]:
    """A migrated coordinator with the plan made; stopped (agents too) on the way out.

    `database` makes the fleet's database (a fresh one on the session's server by default).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    env = {
        "SNAPSHOT_DIR": str(workdir / "snapshots"),
        **(extra_env or {}),
    }
    with (database or fresh_database)() as (url, conninfo):
        fleet = ChaosFleet(url, conninfo, workdir, news_server_url=inn.url, extra_env=env)
        try:
            fleet.start()
            fleet.plan(GROUPS, PLANNED_DAYS, RANGE_ARTICLES)
            yield fleet
        finally:
            fleet.stop()


# The range agents a run starts beside the window agent; the PostgreSQL
# restart runs all three (four agents in all).
RANGE_AGENTS = ("ranges-1", "ranges-2")


def agent_args(news: str) -> dict[str, list[str]]:
    """A window agent and three range agents, all reading the news server directly
    (a run starts two of them unless it asks for more: RANGE_AGENTS)."""
    common = ["--news-server", news, "--batch-headers", "20", "--http-timeout", "10"]
    window = ["--mode", "window", "--lane", "history", "--snapshot-every", "1"]
    window += ["--max-headers-per-second", "80"]
    return {
        "window": [*window, *common],
        "ranges-1": ["--mode", "ranges", *common],
        "ranges-2": ["--mode", "ranges", *common],
        "ranges-3": ["--mode", "ranges", *common],
    }


def start_agents(fleet: Fleet, news: str, names: tuple[str, ...] = ()) -> None:
    for name, args in agent_args(news).items():
        if not names or name in names:
            fleet.start_agent(name, *args)


def wait_until_done(
    fleet: Fleet,
    news: str,
    timeout: float = RUN_TIMEOUT,
    *,
    restores: int = 0,
    plan: Path | None = None,
    window_restarts: int = 8,
    range_agents: tuple[str, ...] = RANGE_AGENTS,
) -> float:
    """Until every range is done; the seconds it took.

    The window agent works alone at first. Until the coordinator has opened
    `restores` snapshots (crash-point hits counted in `plan`'s state), it is
    stopped and started again whenever it holds a lane with a snapshot: the new
    holder restores it. Then the range agents join.
    """
    began = time.monotonic()
    restarted = 0
    start_agents(fleet, news, ("window",))
    joined = not range_agents  # none to start: the window agent reads it all
    while time.monotonic() - began < timeout:
        if not joined and (
            restarted >= window_restarts
            or crash_state(plan).get("hits", {}).get("snapshot.get.opened", 0) >= restores
        ):
            start_agents(fleet, news, range_agents)
            joined = True
        try:
            ((left,),) = fleet.sql("SELECT count(*) FROM seed_range WHERE status <> 'done'")
            snapshotted = holds_a_snapshotted_lane(fleet, "window")
        except psycopg.OperationalError:  # a fault took the database down: look again
            left, snapshotted = -1, False
        if left == 0:
            return time.monotonic() - began
        opened = crash_state(plan).get("hits", {}).get("snapshot.get.opened", 0)
        if (
            opened < restores
            and restarted < window_restarts
            and "holding lane" in fleet.log("window.log")  # this process, not the last
            and snapshotted
        ):
            assert fleet.stop_agent("window", timeout=30) == 0, fleet.log("window.log")
            fleet.start_agent("window", *agent_args(news)["window"])
            restarted += 1
            time.sleep(1.0)
        for name, process in fleet.agents.items():
            assert process.poll() is None, f"{name} exited:\n{fleet.log(name + '.log')}"
        assert fleet.gunicorn is not None and fleet.gunicorn.poll() is None, fleet.log(
            "gunicorn.log"
        )
        time.sleep(0.3)
    rows = fleet.sql("SELECT id, status, next_id, end_id, error FROM seed_range ORDER BY id")
    raise AssertionError(
        f"ranges not done: {[r for r in rows if r[1] != 'done']}\n"
        + "\n".join(f"== {n}\n{fleet.log(n + '.log')}" for n in fleet.agents)
        + "\n== gunicorn\n"
        + fleet.log("gunicorn.log")
    )


def holds_a_snapshotted_lane(fleet: Fleet, node: str) -> bool:
    return bool(
        fleet.sql(
            "SELECT 1 FROM group_lane l JOIN seed_node n ON n.id = l.node_id "
            "WHERE n.name = %s AND l.snapshot_next IS NOT NULL",
            [node],
        )
    )


def stop_agents(fleet: Fleet) -> dict[str, int]:
    for name in fleet.agents:
        wait_started(fleet, name)
    return {name: fleet.stop_agent(name, timeout=30) for name in list(fleet.agents)}


def wait_started(fleet: Fleet, name: str, timeout: float = 15.0) -> None:
    """Until the agent has logged its first line (its SIGTERM handler is in place by then):
    an agent started just before the plan ran out would otherwise die of the SIGTERM."""
    log = fleet.workdir / f"{name}.log"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and fleet.agents[name].poll() is None:
        if log.exists() and log.stat().st_size > 0:
            return
        time.sleep(0.1)


def stuck_leases(fleet: Fleet) -> list[tuple[Any, ...]]:
    """Ranges leased to a live node though the plan is done (agents still running)."""
    return fleet.sql("SELECT id, node_id FROM seed_range WHERE status = 'leased'")


def crash_state(plan: Path | None) -> dict[str, Any]:
    """The crash points' hits and kills so far (read under the workers' lock)."""
    state = plan.with_suffix(".state") if plan else None
    if state is None or not state.exists():
        return {}
    with state.open() as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)
        text = handle.read()
    return json.loads(text) if text else {}


# An agent's retry warning: "<date> <time>,<ms> WARNING <process> <thread> seed_node.http:
# POST /ranges/17/batch: coordinator http://... unavailable (503); retrying in 5.0s"
# (seed_node/assembly.py's format; tests/chaos/test_harness_logs.py holds the two equal).
RETRY = re.compile(
    r"^(\S+ \S+),\d+ WARNING (?:\S+ ){1,4}seed_node\.http: (\S+ \S+): coordinator (?:\S+ )?"
    r"(unreachable|unavailable) \((.*)\); retrying in ([\d.]+)s"
)


NEWS_PAUSE = re.compile(r"the news server failed; waiting ([\d.]+)s")


def agent_waits(fleet: Fleet) -> dict[str, Any]:
    """From the agents' logs: the longest a call kept retrying, and the 5xx it met.

    A call's wait runs from its first retry warning to its last one plus the
    delay named there (the agents log retries, not successes); a warning more
    than a few seconds after the last retry of the same call starts a new wait.
    """
    longest = 0.0
    statuses: list[str] = []
    for name in fleet.agents:
        started: dict[str, float] = {}
        last: dict[str, float] = {}
        log_file = fleet.workdir / f"{name}.log"
        text = log_file.read_text(errors="replace") if log_file.exists() else ""
        for line in text.splitlines():
            paused = NEWS_PAUSE.search(line)
            if paused:
                longest = max(longest, float(paused.group(1)))
            match = RETRY.match(line)
            if not match:
                continue
            stamp, call, kind, cause, delay = match.groups()
            at = time.mktime(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))
            if at > last.get(call, at) + 5:
                started[call] = at
            last[call] = at + float(delay)
            first = started.setdefault(call, at)
            longest = max(longest, at - first + float(delay))
            if kind == "unavailable":
                statuses.append(cause)
    return {"longest_wait": round(longest, 1), "statuses": statuses}


def server_errors(fleet: Fleet) -> list[str]:
    """5xx lines in gunicorn's log (its error log; access lines are not logged)."""
    return [
        line
        for line in fleet.log("gunicorn.log").splitlines()
        if " 500 " in line or "Internal Server Error" in line
    ]


def sigterm(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)


def run_fleet(
    inn: InnServer,
    workdir: Path,
    kills: dict[str, list[int]],
    agent_news: str | None = None,
    coordinator_proxy: Callable[[tuple[str, int]], AbstractContextManager[Any]] | None = None,
    *,
    database: Database | None = None,
    during: dict[str, Callable[[ChaosFleet], AbstractContextManager[Any]]] | None = None,
    agent_env: dict[str, dict[str, str]] | None = None,
    range_agents: tuple[str, ...] = RANGE_AGENTS,
    troublemaker: bool = True,
    server_env: dict[str, str] | None = None,
) -> Outcome:
    """A whole run: plan, agents until done, the outcome and the run's figures.

    `kills` is the crash plan (empty: hits are only counted); `agent_news` is
    the news server the agents read (a fault proxy), INN2 itself by default;
    `coordinator_proxy(upstream)`, if given, is entered and the agents call the
    coordinator through its `url`. `database` makes the fleet's database
    (see running_fleet). Each of `during` (a fault, a client beside the agents)
    is entered once the agents could start and left once the plan is done;
    what it yields is in the outcome's `extra[name]`. `agent_env` adds to an
    agent's environment, by name, `server_env` to the coordinator's; `range_agents` join the window agent. Unless
    `troublemaker` is false (the reference run) or `during` brings its own, a
    troublemaker (tests/chaos/clients.py: stale epochs, replays) calls the
    coordinator directly all through the run; its calls are in
    `extra["troublemaker"]`.
    """
    plan = workdir / "crash-plan.json"
    workdir.mkdir(parents=True, exist_ok=True)
    plan.write_text(json.dumps({"kills": kills}))
    with ExitStack() as stack:
        fleet = stack.enter_context(
            running_fleet(
                inn, workdir, {"CRASH_POINT_PLAN": str(plan), **(server_env or {})}, database
            )
        )
        fleet.agent_env = agent_env or {}
        during = dict(during or {})
        if troublemaker and "troublemaker" not in during:
            direct = fleet.url
            during["troublemaker"] = lambda fleet: clients.running(
                clients.troublemaker(fleet, base=direct), clients.Recorder(), "troublemaker"
            )
        if coordinator_proxy is not None:
            proxy = stack.enter_context(coordinator_proxy(("127.0.0.1", fleet.port)))
            fleet.url = proxy.url  # the agents (and the test's API calls) go through it
            fleet.agent_urls = [proxy.url]
        news = f"{inn.url}/?connections=2"
        if agent_news:  # uncompressed: the proxy finds OVER answers by their text
            news = f"{agent_news}/?connections=2&compression=0"
        with ExitStack() as faults:
            beside = {name: faults.enter_context(f(fleet)) for name, f in during.items()}
            took = wait_until_done(
                fleet, news, restores=RESTORES, plan=plan, range_agents=range_agents
            )
        stuck = stuck_leases(fleet)
        exits = stop_agents(fleet)
        # Stopped gracefully, every agent gave its lanes back.
        held_lanes = fleet.sql("SELECT id FROM group_lane WHERE node_id IS NOT NULL")
        outcome = read_outcome(fleet)
        # A killed PUT leaves its `.part`; the periodic upkeep removes parts
        # untouched for two lease TTLs (leases/snapshots.py, remove_stale_parts):
        # run it as `manage.py maintain` would with the fleet's short TTL (which
        # the system checks refuse to a management command).
        parts = list((workdir / "snapshots").glob("*.part"))
        if parts:
            age = time.time() - newest(parts)
            time.sleep(max(0.0, 2 * LEASE_TTL_SECONDS + 1 - age))
            fleet.python(
                "from leases.snapshots import remove_stale_parts\n"
                f"remove_stale_parts(older_than={2 * LEASE_TTL_SECONDS})\n"
            )
        outcome.extra = {
            "seconds": took,
            "exits": exits,
            "state": crash_state(plan),
            "stuck_leases": stuck,
            "held_lanes": held_lanes,
            "parts_left": [p.name for p in (workdir / "snapshots").glob("*.part")],
            "server_errors": server_errors(fleet),
            **agent_waits(fleet),
            **beside,
        }
        # The figures docs/reliability.md reports, beside the run's logs.
        state = outcome.extra["state"]
        deaths = state.get("kills", [])
        figures = {
            "kills": len(deaths),
            "batches_acknowledged": state.get("hits", {}).get("batch.after_commit", 0)
            - deaths.count("batch.after_commit"),
            "seconds": round(took, 1),
            "longest_wait": outcome.extra["longest_wait"],
            "statuses": outcome.extra["statuses"],
        }
        (workdir / "figures.json").write_text(json.dumps(figures))
        return outcome


def newest(paths: list[Path]) -> float:
    return max(p.stat().st_mtime for p in paths if p.exists()) if paths else 0.0
