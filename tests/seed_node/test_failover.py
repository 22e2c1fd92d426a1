"""The agent given several coordinator hosts: calls fail over to the next host."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from seed_node.cli import main
from seed_node.control import Control
from seed_node.http import Coordinator, Rejected, parse_coordinator_urls
from tests.support.net import free_port
from tests.support.scripted import NO_LEASE, ScriptedCoordinator


@pytest.fixture
def hosts() -> Iterator[tuple[ScriptedCoordinator, ScriptedCoordinator]]:
    first, second = ScriptedCoordinator(), ScriptedCoordinator()
    yield first, second
    first.close()
    second.close()


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"  # nothing listens there


def test_urls_come_repeated_or_comma_separated() -> None:
    assert parse_coordinator_urls(["http://a:1, http://b:2", "http://c:3"]) == [
        "http://a:1",
        "http://b:2",
        "http://c:3",
    ]
    with pytest.raises(ValueError):
        parse_coordinator_urls(" , ")


@pytest.mark.slow
def test_an_unreachable_host_hands_the_call_to_the_next_at_once(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator],
) -> None:
    _, second = hosts
    second.routes["/ranges/lease"] = lambda _: NO_LEASE
    # A backoff would take at least 30 s: failing over must not wait for it.
    client = Coordinator([dead_url(), second.url], "sn_t", max_backoff=60)
    started = time.monotonic()
    assert client.post("/ranges/lease") == NO_LEASE[1]
    assert time.monotonic() - started < 5
    assert client.base_url == second.url
    assert len(second.posted("/ranges/lease")) == 1


@pytest.mark.slow
@pytest.mark.parametrize("status", [502, 503, 504])
def test_a_host_answering_bad_gateway_or_unavailable_hands_over(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator], status: int
) -> None:
    first, second = hosts
    first.routes["/ranges/lease"] = lambda _: (status, {"error": "unavailable"})
    second.routes["/ranges/lease"] = lambda _: NO_LEASE
    client = Coordinator([first.url, second.url], "sn_t", max_backoff=60)
    assert client.post("/ranges/lease") == NO_LEASE[1]
    assert len(first.posted("/ranges/lease")) == 1
    assert len(second.posted("/ranges/lease")) == 1
    # Later calls stay on the host that answered.
    client.post("/ranges/lease")
    assert len(first.posted("/ranges/lease")) == 1


@pytest.mark.slow
def test_a_client_error_is_not_failed_over(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator],
) -> None:
    first, second = hosts
    first.routes["/ranges/lease"] = lambda _: (400, {"error": "invalid", "detail": "no"})
    client = Coordinator([first.url, second.url], "sn_t")
    with pytest.raises(Rejected):
        client.post("/ranges/lease")
    assert second.calls == []


@pytest.mark.slow
def test_all_hosts_down_backs_off_then_finds_one_back(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator],
) -> None:
    first, second = hosts
    answers = iter([(503, {"error": "unavailable"})] * 3)
    first.routes["/ranges/lease"] = lambda _: next(answers, NO_LEASE)
    second.routes["/ranges/lease"] = lambda _: (503, {"error": "unavailable"})
    abort = threading.Event()
    client = Coordinator([first.url, second.url], "sn_t", max_backoff=0.2, abort=abort)
    assert client.post("/ranges/lease") == NO_LEASE[1]
    assert len(first.posted("/ranges/lease")) == 4
    assert len(second.posted("/ranges/lease")) == 3


@pytest.mark.slow
def test_the_agent_takes_several_coordinator_options(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator], tmp_path: Path
) -> None:
    _, second = hosts
    second.routes["/ranges/lease"] = lambda _: NO_LEASE
    token = tmp_path / "token"
    token.write_text("sn_t\n")
    status = main(
        [
            "--coordinator",
            dead_url(),
            "--coordinator",
            second.url,
            "--token-file",
            str(token),
            "--relay",
            "--exit-when-idle",
            "--log-interval",
            "60",
        ],
        control=Control(),
    )
    assert status == 0
    assert len(second.posted("/ranges/lease")) >= 1


@pytest.mark.slow
def test_a_batch_answered_503_during_a_failover_is_sent_again_whole(
    hosts: tuple[ScriptedCoordinator, ScriptedCoordinator],
) -> None:
    """The agent's side of a failover: the same batch again (the coordinator's batch keys
    make a replay change nothing twice: tests/seeding/test_failover_replay.py)."""
    first, _ = hosts
    answers = iter([(503, {"error": "unavailable"})] * 2)
    first.routes["/ranges/7/batch"] = lambda _: next(answers, (200, {"next": 2500}))
    client = Coordinator([first.url], "sn_t", max_backoff=0.2)
    batch = {"epoch": 3, "next": 2500, "headers": 10, "files": [], "fragments": []}
    assert client.post("/ranges/7/batch", batch) == {"next": 2500}
    assert first.posted("/ranges/7/batch") == [batch] * 3
