"""The per-process token cache (indexer/token_cache.py): an enabled node's token is
checked against the database at most every TOKEN_CACHE_SECONDS; a token disabled
or rotated elsewhere stops within that bound, in this process at once."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction

from indexer import token_cache
from indexer.models import Node
from indexer.services import issue_token, set_nodes_disabled
from leases.models import GroupLane
from seeding.models import SeedRange
from tests.support.factories import SeedRangeFactory
from tests.support.lanes import lease_lane
from tests.support.nodes import NodeClient

pytestmark = pytest.mark.django_db

PING = "/api/v1/ping"


@pytest.fixture
def clock(monkeypatch):
    """The cache's monotonic clock, moved by hand."""
    now = [1000.0]
    monkeypatch.setattr(token_cache.time, "monotonic", lambda: now[0])
    return now


@pytest.fixture
def node(settings):
    settings.TOKEN_CACHE_SECONDS = 5
    token_cache.forget_tokens()
    found, token, _ = issue_token("cached-1")
    found.token = token
    return found


def test_a_token_seen_once_is_not_looked_up_again_within_the_bound(
    node, clock, django_assert_num_queries
):
    client = NodeClient(node)
    with django_assert_num_queries(3):  # the token, last_seen_at written, the ping's clock
        assert client.get(PING).status_code == 200
    with django_assert_num_queries(1):  # the ping's clock alone
        assert client.get(PING).status_code == 200
    clock[0] += 5
    with django_assert_num_queries(2):  # expired: the token is looked up again
        assert client.get(PING).status_code == 200


def test_a_token_disabled_elsewhere_stops_within_the_bound(node, clock):
    client = NodeClient(node)
    assert client.get(PING).status_code == 200
    # Another process (or host) disables it: this process's cache does not hear of it.
    Node.objects.filter(id=node.id).update(disabled=True)
    clock[0] += 4.9
    assert client.get(PING).status_code == 200
    clock[0] += 0.1
    refused = client.get(PING)
    assert refused.status_code == 401
    assert "disabled" in refused.json()["detail"]


def test_disabling_and_rotating_in_this_process_stop_the_token_at_once(node, clock):
    client = NodeClient(node)
    assert client.get(PING).status_code == 200
    set_nodes_disabled([node.id], True)
    assert client.get(PING).status_code == 401
    _, new, _ = issue_token("cached-1")  # rotation re-enables the node with a new token
    assert client.get(PING).status_code == 401
    node.token = new
    assert NodeClient(node).get(PING).status_code == 200


def test_unknown_and_disabled_tokens_are_never_kept(node, clock, django_assert_num_queries):
    stranger = Node(id=0, name="stranger")
    stranger.token = "sn_" + "x" * 32
    for _ in range(2):
        with django_assert_num_queries(1):
            assert NodeClient(stranger).get(PING).status_code == 401
    set_nodes_disabled([node.id], True)
    for _ in range(2):
        with django_assert_num_queries(1):
            assert NodeClient(node).get(PING).status_code == 401
    assert token_cache._cache == {}


def test_with_no_cache_every_request_looks_the_token_up(node, settings, django_assert_num_queries):
    settings.TOKEN_CACHE_SECONDS = 0
    client = NodeClient(node)
    assert client.get(PING).status_code == 200
    for _ in range(2):
        with django_assert_num_queries(2):
            assert client.get(PING).status_code == 200


def ping_from_another_thread(node) -> int:
    """A request served by another thread of this process (gthread), on its own
    connection: it sees only what is committed."""
    status: list[int] = []

    def ping() -> None:
        try:
            status.append(NodeClient(node).get(PING).status_code)
        finally:
            connection.close()

    thread = threading.Thread(target=ping)
    thread.start()
    thread.join()
    return status[0]


@pytest.mark.django_db(transaction=True)
def test_a_request_served_while_the_disabling_commits_does_not_keep_the_token(settings):
    # The cache is emptied when the disabling commits, not before: a request on
    # another thread between the UPDATE and the COMMIT still reads the node as
    # enabled and keeps its row, which would otherwise outlive the disabling in
    # the very process that disabled it.
    settings.TOKEN_CACHE_SECONDS = 5
    token_cache.forget_tokens()
    node, node.token, _ = issue_token("cached-race")
    assert NodeClient(node).get(PING).status_code == 200  # last_seen_at written now
    token_cache.forget_tokens()
    with transaction.atomic():
        set_nodes_disabled([node.id], True)
        assert ping_from_another_thread(node) == 200  # the disabling is not committed yet
    assert NodeClient(node).get(PING).status_code == 401


@pytest.mark.django_db(transaction=True)
def test_a_request_served_while_a_rotation_commits_does_not_keep_the_old_token(settings):
    settings.TOKEN_CACHE_SECONDS = 5
    token_cache.forget_tokens()
    node, node.token, _ = issue_token("cached-race")
    assert NodeClient(node).get(PING).status_code == 200  # last_seen_at written now
    token_cache.forget_tokens()
    with transaction.atomic():
        issue_token("cached-race")
        assert ping_from_another_thread(node) == 200  # the new digest is not committed yet
    assert NodeClient(node).get(PING).status_code == 401


def test_a_node_disabled_elsewhere_is_handed_no_range_while_its_token_is_kept(node):
    # Disabling ends a node's leases at once; a process that still keeps its token
    # (within TOKEN_CACHE_SECONDS) must not hand it a new one, which would be held
    # by a disabled node until it lapsed.
    client = NodeClient(node)
    assert client.get(PING).status_code == 200  # the token is kept from here
    Node.objects.filter(id=node.id).update(disabled=True)  # another process disables it
    SeedRangeFactory(start_id=1, end_id=1000)
    response = client.post("/api/v1/ranges/lease")
    assert response.status_code != 200 or response.json()["lease"] is None, response.content
    assert not SeedRange.objects.filter(node_id=node.id).exists()


def test_a_node_disabled_elsewhere_is_handed_no_lane_while_its_token_is_kept(node):
    client = NodeClient(node)
    assert client.get(PING).status_code == 200  # the token is kept from here
    Node.objects.filter(id=node.id).update(disabled=True)  # another process disables it
    SeedRangeFactory(start_id=1, end_id=1000)
    assert lease_lane(client)["lease"] is None
    assert not GroupLane.objects.filter(node_id=node.id).exists()
