"""Two coordinator hosts on one PostgreSQL and one snapshot store; one dies mid-run.

A reference run (one host, one agent) indexes the posts first. Then two
gunicorn hosts share a fresh database and a snapshot directory (the shared
volume); agents are given both URLs, each starting on its own host. Host A is
SIGKILLed (the master and its workers) while its agents hold a range and a
lane: they fail over to host B and finish. The catalog equals the reference
run's, no range is counted twice, and every lane's snapshot file matches its
row, which is what a reader is handed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest

from tests.support.fixtures import inn_server  # noqa: F401
from tests.support.fleet import Fleet, fresh_database
from tests.support.inn2 import InnServer
from tests.support.usenet import make_binary_posts

pytestmark = pytest.mark.e2e

GROUPS = ("alt.binaries.e2e.hosts.a", "alt.binaries.e2e.hosts.b")
PLANNED_DAYS = 20
RANGE_ARTICLES = 100


@pytest.fixture(scope="module")
def posted(inn_server: InnServer) -> InnServer:  # noqa: F811
    for group in GROUPS:
        inn_server.create_group(group)
    articles, _ = make_binary_posts(
        GROUPS, seed=14, releases=50, days=30, incomplete_share=0.2, text_posts=100
    )
    result = inn_server.post_articles(None, articles)
    assert not result.refused, list(result.refused.items())[:3]
    return inn_server


def poll(what: str, check: Any, fleets: list[Fleet], timeout: float = 60) -> Any:
    """check() until it answers something true, within the deadline; agents must stay up."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        for fleet in fleets:
            for name, process in fleet.agents.items():
                assert process.poll() is None, f"{name} exited:\n{fleet.log(name + '.log')}"
        time.sleep(0.2)
    logs = "\n".join(
        f"== {name}\n{fleet.log(name + '.log')}" for fleet in fleets for name in fleet.agents
    )
    raise AssertionError(f"timed out waiting for {what}\n{logs}")


def all_done(fleet: Fleet) -> bool:
    ((left,),) = fleet.sql("SELECT count(*) FROM seed_range WHERE status <> 'done'")
    return left == 0


def comparable_catalog(fleet: Fleet, token_name: str) -> set[tuple[Any, ...]]:
    """Each catalog file by what it is: group, subject, poster, parts, and its NZB's segments."""
    found = set()
    for item in fleet.catalog(token_name):
        document = ElementTree.fromstring(fleet.nzb(f"/api/v1/files/{item['id']}/nzb", token_name))
        segments = frozenset(
            (int(segment.get("number", "0")), segment.text)
            for segment in document.iter("{http://www.newzbin.com/DTD/2003/nzb}segment")
        )
        found.add((item["group"], item["subject"], item["poster"], item["total"], segments))
    return found


@pytest.fixture(scope="module")
def reference(posted: InnServer, tmp_path_factory: pytest.TempPathFactory) -> set[tuple[Any, ...]]:
    workdir = tmp_path_factory.mktemp("reference")
    with fresh_database() as (url, conninfo):
        fleet = Fleet(url, conninfo, workdir, news_server_url=posted.url)
        fleet.server_env = {"SNAPSHOT_DIR": str(workdir / "snapshots")}
        try:
            fleet.start()
            fleet.plan(GROUPS, PLANNED_DAYS, RANGE_ARTICLES)
            news = f"{posted.url}/?connections=4"
            fleet.start_agent("solo", "--mode", "ranges", "--news-server", news, "--workers", "3")
            poll("the reference run", lambda: all_done(fleet), [fleet], timeout=90)
            assert fleet.stop_agent("solo") == 0
            return comparable_catalog(fleet, "solo")
        finally:
            fleet.stop()


@pytest.fixture(scope="module")
def two_hosts(
    posted: InnServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Fleet, Fleet, dict[str, int]]]:
    workdir = tmp_path_factory.mktemp("hosts")
    with fresh_database() as (url, conninfo):
        host_a = Fleet(url, conninfo, workdir / "a", news_server_url=posted.url)
        host_b = Fleet(url, conninfo, workdir / "b", news_server_url=posted.url)
        for host in (host_a, host_b):
            host.workdir.mkdir()
            host.server_env = {"SNAPSHOT_DIR": str(workdir / "snapshots")}
        host_a.agent_urls = [host_a.url, host_b.url]
        host_b.agent_urls = [host_b.url, host_a.url]
        fleets = [host_a, host_b]
        try:
            host_a.start()
            host_b.start()
            host_a.plan(GROUPS, PLANNED_DAYS, RANGE_ARTICLES)
            news = f"{posted.url}/?connections=2"
            # Host A's agents read slowly, so they are mid-range and mid-lane when it dies.
            slow = ["--max-headers-per-second", "60", "--batch-headers", "20"]
            host_a.start_agent("ranger-a", "--mode", "ranges", "--news-server", news, *slow)
            host_a.start_agent(
                "windower-a",
                "--mode",
                "window",
                "--lane",
                "history",
                "--news-server",
                news,
                "--snapshot-every",
                "2",
                *slow,
            )
            poll(
                "host A's agents to hold a range and a lane",
                lambda: (
                    host_a.sql(
                        "SELECT 1 FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
                        "WHERE n.name = 'ranger-a' AND r.status = 'leased' AND r.next_id > r.start_id"
                    )
                    and host_a.sql(
                        "SELECT 1 FROM group_lane l JOIN seed_node n ON n.id = l.node_id "
                        "WHERE n.name = 'windower-a' AND l.snapshot_next IS NOT NULL"
                    )
                ),
                fleets,
            )
            host_a.kill_server()
            host_b.start_agent(
                "ranger-b", "--mode", "ranges", "--news-server", news, "--workers", "2"
            )
            poll("every range done", lambda: all_done(host_b), fleets, timeout=120)
            exit_codes = {
                name: fleet.stop_agent(name) for fleet in fleets for name in list(fleet.agents)
            }
            yield host_a, host_b, exit_codes
        finally:
            host_b.stop()
            host_a.stop()


def test_the_dead_hosts_agents_failed_over_and_finished(
    two_hosts: tuple[Fleet, Fleet, dict[str, int]],
) -> None:
    host_a, host_b, exit_codes = two_hosts
    assert exit_codes == {"ranger-a": 0, "windower-a": 0, "ranger-b": 0}
    for name in ("ranger-a", "windower-a"):
        assert f"calls go to {host_b.url}" in host_a.log(f"{name}.log"), name
    # They kept working after the kill: each reported to host B.
    ((reported,),) = host_b.sql(
        "SELECT count(*) FROM seed_range r JOIN seed_node n ON n.id = r.node_id "
        "WHERE n.name IN ('ranger-a', 'windower-a') AND r.status = 'done'"
    )
    assert reported > 0


def test_no_range_was_counted_twice(two_hosts: tuple[Fleet, Fleet, dict[str, int]]) -> None:
    _, host_b, _ = two_hosts
    rows = host_b.sql(
        "SELECT r.group_id, r.start_id, r.end_id, r.next_id, r.status, r.headers, r.attempts "
        "FROM seed_range r ORDER BY r.group_id, r.start_id"
    )
    assert rows and {row[4] for row in rows} == {"done"}
    # Ranges never overlap and each was read to its end exactly once: the
    # headers counted per group equal the rollups stored for it.
    by_group: dict[int, list[tuple[int, int]]] = {}
    for group_id, start, end, next_id, _, _, _ in rows:
        assert next_id == end + 1
        by_group.setdefault(group_id, []).append((start, end))
    for spans in by_group.values():
        assert all(a[1] < b[0] for a, b in pairwise(spans))
    # Nobody holds anything any more, and no range is leased to two nodes.
    assert host_b.sql("SELECT id FROM seed_range WHERE status = 'leased'") == []


def test_the_catalog_equals_the_reference_runs(
    two_hosts: tuple[Fleet, Fleet, dict[str, int]], reference: set[tuple[Any, ...]]
) -> None:
    _, host_b, _ = two_hosts
    assert reference
    assert comparable_catalog(host_b, "ranger-b") == reference


def test_every_lane_snapshot_on_the_shared_store_matches_its_row(
    two_hosts: tuple[Fleet, Fleet, dict[str, int]],
) -> None:
    _, host_b, _ = two_hosts
    store = Path(host_b.server_env["SNAPSHOT_DIR"])
    lanes = host_b.sql(
        "SELECT group_id, lane, snapshot_size FROM group_lane WHERE snapshot_next IS NOT NULL"
    )
    assert lanes, "the window agent uploaded no snapshot"
    for group_id, lane, size in lanes:
        path = store / f"group-{group_id}-{lane}.gz"
        assert path.stat().st_size == size, path
    # No upload left a part behind, on either host's side of the store.
    assert not [name for name in os.listdir(store) if name.endswith(".part")]
