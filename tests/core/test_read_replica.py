"""Reads that tolerate lag go to a real streaming replica while it keeps up (core/replicas.py).

A Patroni cluster of two members (tests/support/patroni.py), migrated once: the
coordinator's `default` is the cluster (the multi-host DATABASE_URL, libpq
picking the writable member), its `replica` the synchronous standby. With the
standby's replay paused (`pg_wal_replay_pause()`), a search answers from the
replica what it had (the lag within REPLICA_MAX_LAG_SECONDS), then from the
primary once the lag is past it, and from the replica again once it caught up.
"""

from __future__ import annotations

import os
import secrets
import string
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test import Client
from django.test.utils import CaptureQueriesContext

from catalog.models import Release
from coordinator.environment import database_config
from core import replicas
from core.replicas import PRIMARY, REPLICA, replica_state
from newznab import services
from newznab.selectors import forget_term_stats
from tests.support.factories import GroupFactory
from tests.support.patroni import PatroniCluster, patroni_cluster  # noqa: F401
from tests.support.releases import store_fragments
from tests.support.reports import release_files

pytestmark = [
    pytest.mark.django_db(transaction=True, databases=["default", REPLICA]),
    pytest.mark.slow,
]
ROOT = Path(__file__).resolve().parents[2]
# Seconds: short, so the test sees the bound passed, and longer than pausing the replay,
# storing a release and searching take on a loaded machine (the lag is measured from
# the last measure before the pause).
MAX_LAG = 5.0


@pytest.fixture(scope="module")
def cluster(
    patroni_cluster: PatroniCluster,  # noqa: F811
    django_db_setup: None,
) -> Iterator[PatroniCluster]:
    """The cluster with the coordinator's schema (`manage.py migrate` through the cluster
    URL), and the alias `replica` for its synchronous standby: declared after the test
    databases are made (none is made on it) and before a test starts (a test may use
    only the aliases it finds then)."""
    patroni_cluster.wait_for_leader()
    standby = patroni_cluster.wait_for_sync_standby()
    env = {**os.environ, "DATABASE_URL": patroni_cluster.database_url(), "SECRET_KEY": "replica"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "migrate", "--no-input"],
        check=True, capture_output=True, timeout=600, env=env, cwd=ROOT,
    )  # fmt: skip
    replica = _configured(patroni_cluster.replica_url(standby), "DATABASE_REPLICA_URL")
    connections.settings[REPLICA] = replica
    try:
        yield patroni_cluster
    finally:
        connections[REPLICA].close()
        del connections[REPLICA]
        del connections.settings[REPLICA]


def _configured(url: str, variable: str) -> dict[str, Any]:
    config = connections.configure_settings({"default": database_config(url, variable)})
    config["default"]["CONN_MAX_AGE"] = 60
    return config["default"]


@pytest.fixture
def on_cluster(cluster: PatroniCluster, settings: Any) -> Iterator[PatroniCluster]:
    """`default` is the cluster's primary (found by libpq) and `replica` its synchronous
    standby, for one test."""
    settings.REPLICA_MAX_LAG_SECONDS = MAX_LAG
    settings.REPLICA_CHECK_SECONDS = 0.1
    settings.REPLICA_RETRY_SECONDS = 60
    test_database = connections["default"]
    test_database.close()
    connections["default"] = DatabaseWrapper(_configured(cluster.database_url(), "DATABASE_URL"))
    replica_settings = dict(connections[REPLICA].settings_dict)
    replicas.forget_measures()
    forget_term_stats()
    try:
        yield cluster
    finally:
        cluster.resume_replay(cluster.wait_for_sync_standby())
        for alias in (REPLICA, "default"):
            connections[alias].close()
        connections[REPLICA].settings_dict.update(replica_settings)
        connections["default"] = test_database
        replicas.forget_measures()
        forget_term_stats()


def word() -> str:
    return "".join(secrets.choice(string.ascii_lowercase) for _ in range(10)).capitalize()


def posted(title: str) -> str:
    """A release named after `title`, stored on the primary; its searchable name."""
    name = f"{title}.S01E01.1080p.WEB.h264-GRP"
    store_fragments(GroupFactory(), release_files(name, date=1_700_000_000))
    return title


def search(client: Client, key: str, words: str) -> list[str]:
    """The titles a newznab search finds."""
    response = client.get("/api", {"t": "search", "q": words, "apikey": key, "o": "json"})
    assert response.status_code == 200, response.content
    items = response.json()["channel"].get("item", [])
    return [item["title"] for item in (items if isinstance(items, list) else [items])]


def searched(client: Client, key: str, words: str) -> tuple[list[str], int]:
    """(titles found, statements the replica ran for the search).

    The lag measure is not one of them: a search that comes REPLICA_CHECK_SECONDS
    after the last measure (a loaded machine) measures again first, on the replica,
    whichever server then answers it."""
    with CaptureQueriesContext(connections[REPLICA]) as on_replica:
        found = search(client, key, words)
    return found, sum("pg_last_wal_replay_lsn" not in q["sql"] for q in on_replica.captured_queries)


def on_standby(cluster: PatroniCluster, title: str) -> bool:
    with cluster.connect(cluster.wait_for_sync_standby(), superuser=False) as conn:
        return conn.execute(
            "SELECT count(*) FROM catalog_release WHERE name LIKE %s", [title + "%"]
        ).fetchone() == (1,)


def fresh_measure() -> None:
    """A measure taken now (REPLICA_CHECK_SECONDS after the last), the replica serving."""
    time.sleep(0.2)
    until(lambda: replica_state().serving)


def until(check: Callable[[], bool], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.1)


def test_a_search_reads_the_replica_within_the_lag_bound_and_the_primary_past_it(
    on_cluster: PatroniCluster, client: Client
) -> None:
    key = services.issue_api_key("replica-reader")[1]
    before = posted(word())
    until(lambda: on_standby(on_cluster, before))
    # A process's first measure trusts the replica only if it has all the primary had
    # at that instant; a write not yet replayed (a commit waits for the standby's
    # flush, not its replay) leaves the reads on the primary until the next one.
    until(lambda: replica_state().serving)
    found, replica_statements = searched(client, key, before)
    assert found and found[0].startswith(before) and replica_statements > 0
    assert replica_state().serving

    standby = on_cluster.wait_for_sync_standby()
    fresh_measure()
    on_cluster.pause_replay(standby)
    held = posted(word())  # committed on the primary (the standby flushed it, not applied)
    found, replica_statements = searched(client, key, held)
    state = replica_state()
    assert state.serving and state.lag_seconds is not None and state.lag_seconds <= MAX_LAG
    assert found == [] and replica_statements > 0  # the replica's view, within the bound
    assert searched(client, key, before)[0]  # what it had is still answered

    until(lambda: not replica_state().serving, timeout=MAX_LAG + 10)
    assert replica_state().lag_seconds > MAX_LAG  # type: ignore[operator]
    found, replica_statements = searched(client, key, held)
    assert found and found[0].startswith(held) and replica_statements == 0  # the primary

    on_cluster.resume_replay(standby)
    until(lambda: replica_state().serving)
    found, replica_statements = searched(client, key, held)
    assert found and replica_statements > 0


def test_a_replica_that_does_not_answer_sends_the_reads_to_the_primary(
    on_cluster: PatroniCluster, client: Client
) -> None:
    key = services.issue_api_key("replica-down")[1]
    title = posted(word())
    connections[REPLICA].close()
    connections[REPLICA].settings_dict.update(HOST="127.0.0.1", PORT=1)  # nothing listens
    found = search(client, key, title)
    assert found and found[0].startswith(title)
    state = replica_state()
    assert state.configured and not state.reachable and not state.serving
    assert "not answering" in state.problem
    metrics = client.get("/metrics").content.decode()
    assert "seed_replica_serving 0.0" in metrics


def test_lists_and_the_dashboard_read_the_replica_and_show_its_lag(
    on_cluster: PatroniCluster, admin_client: Client
) -> None:
    title = posted(word())
    until(lambda: on_standby(on_cluster, title))
    until(lambda: replica_state().serving)  # the process's first measure (see above)
    for path in ("/api/v1/files", "/api/v1/releases"):
        with CaptureQueriesContext(connections[REPLICA]) as on_replica:
            response = admin_client.get(path)
        assert response.status_code == 200, response.content
        assert any("catalog_" in q["sql"] for q in on_replica.captured_queries), path
    page = admin_client.get("/admin/dashboard/").content.decode()
    assert 'id="replica" data-serving="1"' in page
    metrics = admin_client.get("/metrics").content.decode()
    assert "seed_replica_serving 1.0" in metrics and "seed_replica_lag_seconds" in metrics


def test_a_row_read_from_the_replica_is_written_to_the_primary(
    on_cluster: PatroniCluster,
) -> None:
    title = posted(word())
    until(lambda: on_standby(on_cluster, title))
    release = Release.objects.using(REPLICA).get(name__startswith=title)
    release.name = title + ".renamed"
    release.save()  # a standby would refuse it (25006): the router sends it to the primary
    assert Release.objects.using(PRIMARY).get(id=release.id).name == title + ".renamed"
