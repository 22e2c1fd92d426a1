"""``seed-node --mode inspect`` against a real coordinator (live_server) and INN2.

An obfuscated release is posted to INN2 (real par2, nfo and zip articles) and
stored in the catalog with those message-ids; the coordinator plans its
inspection; the agent leases it, fetches from INN2 (or through the
coordinator's relay) and reports, and the coordinator accepts the report.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from indexer.newsserver import close_news_pool
from inspections import planning
from inspections.models import Inspection
from seed_node.cli import main
from seed_node.control import Control
from tests.support.factories import GroupFactory, NodeFactory
from tests.support.inn2 import InnServer
from tests.support.inspect_posts import catalog_reports, obfuscated_release
from tests.support.releases import store_fragments

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.inn]

GROUP = "alt.binaries.inspect.live"
SEEDS = itertools.count(41)  # each test posts articles of its own (INN2 refuses a repost)


@pytest.fixture
def planned(inn_server: InnServer) -> Inspection:
    inn_server.create_group(GROUP)
    files = obfuscated_release(GROUP, seed=next(SEEDS))
    articles = [article for posted in files.values() for article in posted.articles]
    assert inn_server.post_articles(None, articles).accepted == len(articles)
    store_fragments(GroupFactory(name=GROUP), catalog_reports(files))
    planning.plan_all()
    return Inspection.objects.get()


def run_agent(url: str, token_file: Path, *args: str) -> int:
    argv = ["--coordinator", url, "--token-file", str(token_file), "--exit-when-idle"]
    return main([*argv, "--mode", "inspect", "--max-backoff", "1", *args], control=Control())


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(NodeFactory().token)
    return path


def test_the_agent_inspects_what_the_coordinator_planned(
    live_server, planned: Inspection, inn_server: InnServer, token_file: Path
) -> None:
    assert sorted(article["role"] for article in planned.articles) == ["archive", "nfo", "par2"]
    assert run_agent(live_server.url, token_file, "--news-server", inn_server.url) == 0
    planned.refresh_from_db()
    assert (planned.status, planned.error, planned.attempts) == ("done", "", 1)
    assert planned.outcome is not None


def test_through_the_relay_of_the_coordinators_news_server(
    live_server, settings, planned: Inspection, inn_server: InnServer, token_file: Path
) -> None:
    settings.NEWS_SERVER_URL = inn_server.url
    try:
        assert run_agent(live_server.url, token_file, "--relay") == 0
    finally:
        close_news_pool()  # its connections hold slots in the database
    planned.refresh_from_db()
    assert (planned.status, planned.error) == ("done", "")


def test_an_unreachable_news_server_gives_the_inspection_back_uncounted(
    live_server, planned: Inspection, token_file: Path
) -> None:
    # --exit-when-idle: after the release the inspection is queued again and leased
    # again; a second node-side failure and so on until the coordinator stops
    # handing it out (its uncounted releases are bounded too).
    assert run_agent(live_server.url, token_file, "--news-server", "nntp://127.0.0.1:1") == 0
    planned.refresh_from_db()
    assert planned.uncounted_releases >= 1
    assert "cannot connect" in planned.error
