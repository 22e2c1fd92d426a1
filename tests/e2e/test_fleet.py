"""End to end: a coordinator under gunicorn, INN2, and three seed-node agents.

Thousands of generated binary posts across three groups over 30 days (some files
incomplete, some articles cancelled); ranges planned for the last 20 days; two
range-mode agents (one reads through the coordinator's relay) and one window-mode
agent. One range agent is killed with SIGKILL in the middle of a range and a short
lease TTL hands its range to another. The same fleet is then run again with every
batch sent twice.

Ranges are planned with `plan_seed --days 20` against INN2, as an operator
would; the catalog is read back through the files API and each file's NZB.
"""

from __future__ import annotations

import signal
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.support import catalog_figures as figures
from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.fleet import AdminSession, Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.usenet import Manifest, make_binary_posts
from usenet.nntp import NNTPClient
from usenet.overview import parse_over_line

pytestmark = pytest.mark.e2e

GROUPS = ("alt.binaries.e2e.fleet.a", "alt.binaries.e2e.fleet.b", "alt.binaries.e2e.fleet.c")
PLANNED_DAYS = 20
RANGE_ARTICLES = 150
CANCELLED = 25


Plan = dict[str, list[tuple[int, int]]]


@dataclass
class Posted:
    """What is on the news server."""

    manifest: Manifest
    cutoff: int  # Unix time, PLANNED_DAYS ago when the articles were posted
    cancelled: set[str]
    # Per group: article number -> message-id, as OVER reports them (cancels are holes).
    present: dict[str, dict[int, str]] = field(default_factory=dict)
    dates: dict[str, dict[int, int]] = field(default_factory=dict)

    def articles_in(self, plan: Plan) -> int:
        return sum(
            1
            for group, spans in plan.items()
            for number in self.present[group]
            if any(start <= number <= end for start, end in spans)
        )

    def ids_in(self, plan: Plan) -> set[str]:
        return {
            message_id
            for group, spans in plan.items()
            for number, message_id in self.present[group].items()
            if any(start <= number <= end for start, end in spans)
        }


@pytest.fixture(scope="module")
def posted(inn_server: InnServer) -> Posted:  # noqa: F811
    for group in GROUPS:
        inn_server.create_group(group)
    articles, manifest = make_binary_posts(
        GROUPS, seed=7, releases=90, days=30, incomplete_share=0.2, text_posts=300
    )
    result = inn_server.post_articles(None, articles)
    assert not result.refused, list(result.refused.items())[:3]
    # Cancel a few segments of files inside the window: their numbers become holes.
    cutoff = int((datetime.now(UTC) - timedelta(days=PLANNED_DAYS)).timestamp())
    recent = [
        segment.message_id
        for posted_file in manifest.files.values()
        for segment in posted_file.segments
        if segment.date.timestamp() >= cutoff + 3600
    ]
    cancelled = set(recent[:: max(1, len(recent) // CANCELLED)][:CANCELLED])
    for message_id in cancelled:
        inn_server.cancel(message_id)
    state = Posted(manifest=manifest, cutoff=cutoff, cancelled=cancelled)
    with NNTPClient(inn_server.host, inn_server.port, timeout=30) as client:
        for group in GROUPS:
            info = client.group(group)
            lines = [parse_over_line(line) for line in client.over(info.first, info.last)]
            overviews = [o for o in lines if o is not None]
            state.present[group] = {o.article: o.message_id for o in overviews}
            state.dates[group] = {o.article: o.date for o in overviews if o.date is not None}
    assert not (cancelled & set().union(*(set(p.values()) for p in state.present.values())))
    return state


@dataclass
class FleetRun:
    fleet: Fleet
    plan: Plan
    victim_range: int | None
    window_node: str
    exit_codes: dict[str, int]


def run_fleet(
    posted: Posted, inn: InnServer, workdir: Path, *, duplicate: bool
) -> Iterator[FleetRun]:
    workdir.mkdir(parents=True, exist_ok=True)
    with fresh_database() as (url, conninfo):
        fleet = Fleet(url, conninfo, workdir, news_server_url=inn.url)
        try:
            fleet.start()
            plan = fleet.plan(GROUPS, PLANNED_DAYS, RANGE_ARTICLES)
            news = f"{inn.url}/?connections=4"
            extra = ["--duplicate-batches"] if duplicate else []
            # The ranger reads through the relay: without it, the test must fail,
            # not quietly read the news server directly.
            assert fleet.has_path("/overviews"), "the coordinator serves no overview relay"
            # The victim reads slowly (a range takes it seconds), so it cannot
            # finish the plan before the others start and is surely in the
            # middle of a range when it is killed. It starts first: a window
            # agent started first could read every group before the victim
            # leased anything.
            fleet.start_agent(
                "victim",
                "--mode",
                "ranges",
                "--news-server",
                news,
                "--max-headers-per-second",
                "40",
                "--batch-headers",
                "20",
                *extra,
            )
            wait_for_progress(fleet, "victim")
            # The window agent takes a lane before the fast range agent starts,
            # so the range agents (which skip held lanes) cannot finish it all.
            fleet.start_agent(
                "windower",
                "--mode",
                "window",
                "--lane",
                "history",
                "--news-server",
                news,
                "--batch-headers",
                "50",
                "--snapshot-every",
                "2",
                *extra,
            )
            wait_for_lane(fleet, "windower")
            victim_range = kill_mid_range(fleet, "victim")
            fleet.start_agent(
                "ranger",
                "--mode",
                "ranges",
                "--relay",
                "--batch-headers",
                "50",
                "--workers",
                "2",
                *extra,
            )
            # Up before it can be stopped: the lanes may finish the plan without it.
            wait_for_first_call(fleet, "ranger")
            wait_until_all_done(fleet, timeout=180)
            exit_codes = {name: fleet.stop_agent(name) for name in ("ranger", "windower")}
            yield FleetRun(fleet, plan, victim_range, "windower", exit_codes)
        finally:
            fleet.stop()


def wait_for_progress(fleet: Fleet, node: str, timeout: float = 60) -> int:
    """The id of a range the node holds and has reported part of, once there is one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = fleet.sql(
            "SELECT r.id FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
            "WHERE n.name = %s AND r.status = 'leased' AND r.next_id > r.start_id",
            [node],
        )
        if rows:
            return rows[0][0]
        assert fleet.agents[node].poll() is None, fleet.log(f"{node}.log")
        time.sleep(0.1)
    raise AssertionError(f"{node} made no progress:\n{fleet.log(node + '.log')}")


def kill_mid_range(fleet: Fleet, node: str, timeout: float = 60) -> int:
    """SIGKILL the node while it holds a range it has not fully reported; that range's id.

    The node is frozen (SIGSTOP) before its ranges are read, so it cannot finish
    the range between the check and the kill; while it holds none, it runs on.
    A fully reported range is retired as done, never leased again, and the
    tests are about the takeover. One it has reported part of is preferred.
    """
    agent = fleet.agents[node]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert agent.poll() is None, fleet.log(f"{node}.log")
        agent.send_signal(signal.SIGSTOP)
        rows = fleet.sql(
            "SELECT r.id FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
            "WHERE n.name = %s AND r.status = 'leased' AND r.next_id <= r.end_id "
            "ORDER BY r.next_id > r.start_id DESC, r.id",
            [node],
        )
        if rows:
            agent.kill()
            agent.wait()
            return rows[0][0]
        agent.send_signal(signal.SIGCONT)
        time.sleep(0.2)
    raise AssertionError(f"{node} never held an unfinished range:\n{fleet.log(node + '.log')}")


def wait_for_first_call(fleet: Fleet, node: str, timeout: float = 60) -> None:
    """Until the node has called the coordinator (it is running, its signal handlers set)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = fleet.sql(
            "SELECT 1 FROM seed_node WHERE name = %s AND last_seen_at IS NOT NULL", [node]
        )
        if rows:
            return
        assert fleet.agents[node].poll() is None, fleet.log(f"{node}.log")
        time.sleep(0.1)
    raise AssertionError(f"{node} never called the coordinator:\n{fleet.log(node + '.log')}")


def wait_for_lane(fleet: Fleet, node: str, timeout: float = 60) -> None:
    """Until the node holds a group's lane (or has already reported from one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ((held,),) = fleet.sql(
            "SELECT count(*) FROM group_lane l JOIN seed_node n ON n.id = l.node_id "
            "WHERE n.name = %s",
            [node],
        )
        ((reported,),) = fleet.sql(
            "SELECT count(*) FROM header_rollup h JOIN seed_node n ON n.id = h.node_id "
            "WHERE n.name = %s",
            [node],
        )
        if held or reported:
            return
        assert fleet.agents[node].poll() is None, fleet.log(f"{node}.log")
        time.sleep(0.1)
    raise AssertionError(f"{node} took no lane:\n{fleet.log(node + '.log')}")


def wait_until_all_done(fleet: Fleet, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        (left,) = fleet.sql("SELECT count(*) FROM seed_range WHERE status <> 'done'")[0]
        if left == 0:
            return
        for name, process in fleet.agents.items():
            if name != "victim":
                assert process.poll() is None, f"{name} exited:\n{fleet.log(name + '.log')}"
        time.sleep(0.5)
    rows = fleet.sql("SELECT id, status, next_id, end_id, error FROM seed_range ORDER BY id")
    raise AssertionError(
        f"ranges not done: {[r for r in rows if r[1] != 'done']}\n"
        + "\n".join(f"== {n}\n{fleet.log(n + '.log')}" for n in fleet.agents)
    )


@pytest.fixture(scope="module")
def first_run(
    posted: Posted,
    inn_server: InnServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[FleetRun]:
    yield from run_fleet(posted, inn_server, tmp_path_factory.mktemp("fleet"), duplicate=False)


@pytest.fixture(scope="module")
def duplicate_run(
    posted: Posted,
    inn_server: InnServer,  # noqa: F811
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[FleetRun]:
    yield from run_fleet(posted, inn_server, tmp_path_factory.mktemp("dup"), duplicate=True)


# --- what the coordinator recorded ---------------------------------------------


def range_counters(run: FleetRun) -> dict[tuple[str, int, int], tuple[str, int]]:
    rows = run.fleet.sql(
        "SELECT g.name, r.start_id, r.end_id, r.status, r.headers "
        "FROM seed_range r JOIN news_group g ON g.id = r.group_id"
    )
    return {(name, start, end): (status, headers) for name, start, end, status, headers in rows}


def test_every_range_is_done_and_its_headers_match_the_articles(
    first_run: FleetRun, posted: Posted
) -> None:
    counters = range_counters(first_run)
    assert {status for status, _ in counters.values()} == {"done"}
    for (group, start, end), (_, headers) in counters.items():
        present = sum(1 for number in posted.present[group] if start <= number <= end)
        assert headers == present, (group, start, end)
    assert sum(h for _, h in counters.values()) == posted.articles_in(first_run.plan)
    assert first_run.exit_codes == {"ranger": 0, "windower": 0}


def test_plan_seed_planned_the_last_20_days_newest_first(
    first_run: FleetRun, posted: Posted
) -> None:
    slack = 300  # seconds between posting and planning
    for group in GROUPS:
        spans = first_run.plan[group]
        assert all(end - start + 1 <= RANGE_ARTICLES for start, end in spans)
        assert all(a_end + 1 == b_start for (_, a_end), (b_start, _) in pairwise(spans))
        first, last = spans[0][0], spans[-1][1]
        assert last >= max(posted.present[group])  # GROUP's last counts cancelled ones
        dates = posted.dates[group]
        assert dates[min(n for n in dates if n >= first)] >= posted.cutoff - slack
        assert all(date < posted.cutoff + slack for n, date in dates.items() if n < first)
    # Newest first: within each group, ids (the claim order) run from the top down.
    rows = first_run.fleet.sql(
        "SELECT g.name, r.start_id FROM seed_range r JOIN news_group g ON g.id = r.group_id "
        "ORDER BY r.id"
    )
    for group in GROUPS:
        starts = [start for name, start in rows if name == group]
        assert starts == sorted(starts, reverse=True)


def test_the_killed_agents_range_was_taken_over(first_run: FleetRun) -> None:
    ((status, attempts, holder),) = first_run.fleet.sql(
        "SELECT r.status, r.attempts, n.name FROM seed_range r "
        "JOIN seed_node n ON n.id = r.node_id WHERE r.id = %s",
        [first_run.victim_range],
    )
    assert status == "done", first_run.fleet.log("victim.log")
    # Taken over after the TTL: another lease of it, by another node.
    assert attempts >= 2
    assert holder != "victim"


def test_batches_sent_twice_leave_the_same_counters(
    first_run: FleetRun, duplicate_run: FleetRun
) -> None:
    assert range_counters(duplicate_run) == range_counters(first_run)
    assert duplicate_run.exit_codes == {"ranger": 0, "windower": 0}


# --- window indexing ----------------------------------------------------------


def test_the_window_agent_indexed_a_lane(first_run: FleetRun) -> None:
    ((headers,),) = first_run.fleet.sql(
        "SELECT coalesce(sum(h.headers), 0) FROM header_rollup h JOIN seed_node n "
        "ON n.id = h.node_id WHERE n.name = %s",
        [first_run.window_node],
    )
    assert headers > 0
    ((ranges,),) = first_run.fleet.sql(
        "SELECT count(*) FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
        "WHERE n.name = %s AND r.status = 'done'",
        [first_run.window_node],
    )
    assert ranges > 0


# --- the catalog --------------------------------------------------------------


def nzb_segments(run: FleetRun, file_id: int) -> frozenset[tuple[int, str]]:
    """(part, message-id) of each segment, read from the file's NZB export."""
    document = ElementTree.fromstring(run.fleet.nzb(f"/api/v1/files/{file_id}/nzb", "ranger"))
    return frozenset(
        (int(segment.get("number", "0")), f"<{segment.text}>")
        for segment in document.iter("{http://www.newzbin.com/DTD/2003/nzb}segment")
    )


def catalog_by_segments(run: FleetRun) -> dict[frozenset[tuple[int, str]], dict[str, Any]]:
    files = run.fleet.catalog("ranger")
    by_segments: dict[frozenset[tuple[int, str]], dict[str, Any]] = {}
    for item in files:
        key = nzb_segments(run, item["id"])
        assert len(key) == item["segments"], item
        assert key not in by_segments, f"two catalog files with the same segments: {item}"
        by_segments[key] = item
    return by_segments


def test_the_catalog_holds_every_posted_file_once_with_its_segments(
    first_run: FleetRun, posted: Posted
) -> None:
    planned = posted.ids_in(first_run.plan)
    catalog = catalog_by_segments(first_run)
    # Which posted file each catalog file came from: never two, never a mix.
    owner = {
        segment.message_id: name
        for name, posted_file in posted.manifest.files.items()
        for segment in posted_file.segments
    }
    complete_by_segments = {segments: item["complete"] for segments, item in catalog.items()}
    found: dict[str, list[frozenset[tuple[int, str]]]] = defaultdict(list)
    for segments in catalog:
        names = {owner.get(message_id) for _, message_id in segments}
        assert len(names) == 1 and None not in names, f"a catalog file mixes posts: {names}"
        found[names.pop()].append(segments)
    for name, posted_file in posted.manifest.files.items():
        expected = frozenset(
            (segment.part, segment.message_id)
            for segment in posted_file.segments
            if segment.message_id in planned
        )
        if not expected:
            assert name not in found, f"{name} was not posted inside the planned window"
            continue
        assert len(found[name]) == 1, f"{name} is in the catalog {len(found[name])} times"
        assert found[name][0] == expected, name
        # Complete exactly when every segment of the post is there to be read.
        whole = len(expected) == posted_file.total_parts
        assert complete_by_segments[expected] is whole, name
    # Nothing but binary segments from inside the window, nothing cancelled.
    catalogued = {message_id for segments in catalog for _, message_id in segments}
    assert catalogued <= planned
    assert not catalogued & posted.cancelled


def test_batches_sent_twice_yield_the_identical_catalog(
    first_run: FleetRun, duplicate_run: FleetRun
) -> None:
    def comparable(run: FleetRun) -> set[tuple[Any, ...]]:
        return {
            (item["group"], item["subject"], item["poster"], item["total"], segments)
            for segments, item in catalog_by_segments(run).items()
        }

    first = comparable(first_run)
    assert first
    assert comparable(duplicate_run) == first


# --- the console's catalog figures ------------------------------------------------


def console_matches_the_tables(fleet: Fleet, admin: AdminSession) -> figures.Figures:
    """Every catalog figure of the dashboard, the status and /metrics against COUNT/SUM."""
    expected = figures.counted(fleet.sql(figures.COUNT_SQL)[0])
    html = admin.get("/admin/dashboard/")
    assert "≈" not in html
    assert figures.from_dashboard(html) == expected
    groups = figures.groups_from_dashboard(html)
    by_group = figures.counted_by_group(fleet.sql(figures.COUNT_BY_GROUP_SQL))
    assert {name: (c, f) for name, (c, f, _) in groups.items()} == by_group
    assert figures.from_status(fleet.api("/api/v1/status", "ranger")) == expected
    assert figures.from_metrics(fleet.metrics()) == expected
    return expected


def test_the_consoles_catalog_figures_equal_the_tables_after_runs_prunes_and_deletes(
    first_run: FleetRun, duplicate_run: FleetRun
) -> None:
    # Runs last: it prunes and deletes files of the second run's catalog.
    first = console_matches_the_tables(first_run.fleet, first_run.fleet.admin_session())
    assert 0 < first.complete < first.files
    fleet = duplicate_run.fleet
    admin = fleet.admin_session()
    assert console_matches_the_tables(fleet, admin) == first  # every batch sent twice
    assert "no drift" in fleet.manage("rebuild_catalog_summary")
    # An operator prunes the incomplete files no batch has added to for hours ...
    fleet.execute(
        "UPDATE catalog_file SET updated_at = now() - interval '3 hours' WHERE NOT complete"
    )
    fleet.manage("prune_catalog", "--incomplete-older-than", "1")
    pruned = console_matches_the_tables(fleet, admin)
    assert (pruned.files, pruned.complete) == (first.complete, first.complete)
    # ... and deletes the newest file in the admin.
    ((newest,),) = fleet.sql("SELECT id FROM catalog_file ORDER BY date DESC, id LIMIT 1")
    body = {"action": "delete_files", "_selected_action": str(newest), "confirmed": "yes"}
    assert "Deleted 1 file(s)." in admin.post("/admin/catalog/catalogfile/", body)
    deleted = console_matches_the_tables(fleet, admin)
    assert deleted.files == pruned.files - 1
