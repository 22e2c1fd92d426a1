"""An inspecting worker's batches against a scripted coordinator, without a news
server: leases held only once the lease call's answer is read, one failure in a
batch stranding none of the others, and the answers to reports sent together
matched to them by id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from seed_node.control import Control, Stats
from seed_node.http import Coordinator, CoordinatorError
from seed_node.inspecting import InspectLease, Inspector
from seed_node.worker import Worker
from tests.support.scripted import Answer, ScriptedCoordinator

ARTICLES = [{"role": "par2", "message_ids": ["<a1@x>"], "bytes": 4120, "name": "q8w7e6.par2"}]
REPORT = {"epoch": 2, "results": [], "missing": []}
REPORTED = (200, {"release": {"id": 9001, "name": "Real.Name", "renamed": True}})


def lease_data(number: int) -> dict[str, Any]:
    return {"id": number, "epoch": 2, "release": 9000 + number, "group": "a.b.c",
            "articles": ARTICLES}  # fmt: skip


class Backoff:
    def reset(self) -> None:
        pass


class ScriptedWorker:
    """What an Inspector uses of a Worker, its calls going to the scripted coordinator."""

    release = Worker.release
    name = "worker-1"

    def __init__(self, url: str) -> None:
        self.control, self.stats, self.backoff = Control(), Stats(), Backoff()
        self.coordinator = Coordinator(url, "sn_test-token", max_backoff=0.01)

    def call(self, path: str, body: Any = None, busy_attempts: int | None = None) -> Any:
        return self.coordinator.post(path, body, busy_attempts=busy_attempts)


class Heartbeats:
    """The leases an Inspector holds on its heartbeat."""

    def __init__(self) -> None:
        self.held: set[str] = set()

    def hold(self, path: str, epoch: int, lease: Any = None) -> None:
        self.held.add(path)

    def drop(self, path: str) -> None:
        self.held.discard(path)


class Pending:
    """A fetched inspection's report, or a bug in parsing it."""

    def __init__(self, bug: Exception | None = None) -> None:
        self.bug = bug

    def report(self) -> dict[str, Any]:
        if self.bug is not None:
            raise self.bug
        return dict(REPORT)


@pytest.fixture
def inspector(coordinator: ScriptedCoordinator) -> Iterator[Inspector]:
    worker = ScriptedWorker(coordinator.url)
    yield Inspector(worker, articles=None)  # type: ignore[arg-type]


def held_batch(numbers: tuple[int, ...], heartbeat: Heartbeats) -> list[InspectLease]:
    leases = [InspectLease.from_json(lease_data(n)) for n in numbers]
    for lease in leases:
        heartbeat.hold(lease.path, lease.epoch, lease)
    return leases


def inspections_done(inspector: Inspector) -> float:
    return inspector.stats.snapshot()["inspections"]


@pytest.mark.parametrize("extra", [{"id": 44, "epoch": 2}, lease_data(44)])
def test_a_release_refused_in_the_lease_call_leaves_no_lease_on_the_heartbeat(
    coordinator: ScriptedCoordinator, inspector: Inspector, extra: dict[str, Any]
) -> None:
    """An unreadable lease, or one past the count asked, is given back; when that
    release fails, the leases read before it are not left heartbeated for ever."""
    leases = [lease_data(41), lease_data(42), extra]
    coordinator.routes["/inspections/lease"] = lambda _: (
        200,
        {"lease": leases[0], "leases": leases},
    )
    coordinator.routes["/inspections/44/release"] = lambda _: (
        400,
        {"error": "invalid", "detail": "no"},
    )
    heartbeat = Heartbeats()
    with pytest.raises(CoordinatorError):
        inspector.lease(heartbeat, count=2)  # type: ignore[arg-type]
    assert coordinator.posted("/inspections/44/release")
    assert heartbeat.held == set()


def test_a_parse_bug_in_one_of_three_strands_none_of_the_others(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    coordinator.routes["/inspections/reports"] = lambda body: (
        200, {"reports": [{"id": item["id"], "status": 200} for item in body["reports"]]},
    )  # fmt: skip
    coordinator.routes["/inspections/42/release"] = lambda _: (204, None)
    heartbeat = Heartbeats()
    a, b, c = held_batch((41, 42, 43), heartbeat)
    batch = [(a, Pending()), (b, Pending(RuntimeError("a bug in the parser"))), (c, Pending())]
    inspector.finish_all(batch, heartbeat)  # type: ignore[arg-type]
    (call,) = coordinator.posted("/inspections/reports")
    assert [item["id"] for item in call["reports"]] == [41, 43]
    (release,) = coordinator.posted("/inspections/42/release")
    assert release["error"] == "the agent failed: RuntimeError: a bug in the parser"
    assert heartbeat.held == set()
    assert inspections_done(inspector) == 2


def test_a_release_refused_after_a_parse_bug_strands_none_of_the_others(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    coordinator.routes["*"] = lambda _: REPORTED
    coordinator.routes["/inspections/41/release"] = lambda _: (
        400, {"error": "invalid", "detail": "refused"},
    )  # fmt: skip
    inspector.takes_reports = False  # each report alone
    heartbeat = Heartbeats()
    a, b, c = held_batch((41, 42, 43), heartbeat)
    batch = [(a, Pending(RuntimeError("a bug"))), (b, Pending()), (c, Pending())]
    inspector.finish_all(batch, heartbeat)  # type: ignore[arg-type]
    assert coordinator.posted("/inspections/42/report") and coordinator.posted(
        "/inspections/43/report"
    )
    assert heartbeat.held == set()
    assert inspections_done(inspector) == 2


def test_a_release_refused_for_one_answer_of_several_strands_none_of_the_others(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    refused = {"status": 400, "error": "invalid", "detail": "results[0] is not an object"}
    coordinator.routes["/inspections/reports"] = lambda _: (200, {"reports": [
        {"id": 41, **refused}, {"id": 42, "status": 200}, {"id": 43, "status": 200},
    ]})  # fmt: skip
    coordinator.routes["/inspections/41/release"] = lambda _: (
        400, {"error": "invalid", "detail": "refused"},
    )  # fmt: skip
    heartbeat = Heartbeats()
    leases = held_batch((41, 42, 43), heartbeat)
    inspector.finish_all([(lease, Pending()) for lease in leases], heartbeat)  # type: ignore[arg-type]
    assert coordinator.posted("/inspections/41/release")
    assert heartbeat.held == set()
    assert inspections_done(inspector) == 2


def answering(answer: Answer) -> Any:
    return lambda _: answer


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param((200, {"reports": [{"id": 42, "status": 200}, {"id": 41, "status": 200}]}),
                     id="answers-out-of-order"),
        pytest.param((200, {"reports": [{"id": 41, "status": 200}, "x"]}), id="an-answer-not-an-object"),
        pytest.param((200, {"reports": "x"}), id="unreadable"),
        pytest.param((200, ["x"]), id="not-an-object"),
        pytest.param((400, {"error": "invalid", "detail": "reports must be a list"}), id="whole-call-400"),
        pytest.param((500, {"error": "internal", "detail": "a bug"}), id="whole-call-500"),
    ],
)  # fmt: skip
def test_an_answer_to_reports_together_it_cannot_match_sends_each_alone(
    coordinator: ScriptedCoordinator, inspector: Inspector, answer: Answer
) -> None:
    coordinator.routes["/inspections/reports"] = answering(answer)
    coordinator.routes["*"] = lambda _: REPORTED
    heartbeat = Heartbeats()
    leases = held_batch((41, 42), heartbeat)
    inspector.finish_all([(lease, Pending()) for lease in leases], heartbeat)  # type: ignore[arg-type]
    assert coordinator.posted("/inspections/41/report") == [REPORT]
    assert coordinator.posted("/inspections/42/report") == [REPORT]
    assert heartbeat.held == set()
    assert inspections_done(inspector) == 2
    assert inspector.takes_reports  # the call is tried again with the next batch


@pytest.mark.parametrize("status", [404, 405])
def test_a_coordinator_without_reports_together_gets_each_alone(
    coordinator: ScriptedCoordinator, inspector: Inspector, status: int
) -> None:
    coordinator.routes["/inspections/reports"] = answering((status, {"error": "x", "detail": "no"}))
    coordinator.routes["*"] = lambda _: REPORTED
    heartbeat = Heartbeats()
    leases = held_batch((41, 42), heartbeat)
    inspector.finish_all([(lease, Pending()) for lease in leases], heartbeat)  # type: ignore[arg-type]
    assert len(coordinator.posted("/report")) == 2
    assert not inspector.takes_reports


def test_a_report_already_applied_counts_as_done_not_lost(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    done = {"status": 409, "error": "lease_lost",
            "detail": "Inspection 41 is done, not leased: lease another inspection."}  # fmt: skip
    lost = {"status": 409, "error": "lease_lost",
            "detail": "Inspection 42 is leased to another node now: drop it and lease again."}  # fmt: skip
    coordinator.routes["/inspections/reports"] = answering(
        (200, {"reports": [{"id": 41, **done}, {"id": 42, **lost}]})
    )
    heartbeat = Heartbeats()
    leases = held_batch((41, 42), heartbeat)
    inspector.finish_all([(lease, Pending()) for lease in leases], heartbeat)  # type: ignore[arg-type]
    assert inspections_done(inspector) == 1
    assert not coordinator.posted("/release")


def test_a_coordinator_from_before_counts_hands_out_its_lease_alone(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    """Asked for several, a coordinator that answers only ``lease`` (no ``leases``)
    hands out that one: it is held and nothing is given back."""
    coordinator.routes["/inspections/lease"] = answering(
        (200, {"lease": lease_data(41), "retry_after": None, "paused": None})
    )
    heartbeat = Heartbeats()
    taken = inspector.lease(heartbeat, count=4)  # type: ignore[arg-type]
    assert coordinator.posted("/inspections/lease") == [{"count": 4}]
    assert isinstance(taken, list) and [lease.id for lease in taken] == [41]
    assert heartbeat.held == {"/inspections/41"}
    assert not coordinator.posted("/release")


def test_a_token_refused_while_releasing_in_a_batch_stops_the_node(
    coordinator: ScriptedCoordinator, inspector: Inspector
) -> None:
    coordinator.routes["*"] = lambda _: REPORTED
    coordinator.routes["/inspections/41/release"] = answering(
        (401, {"error": "unauthenticated", "detail": "unknown token"})
    )
    inspector.takes_reports = False
    heartbeat = Heartbeats()
    a, b = held_batch((41, 42), heartbeat)
    inspector.finish_all([(a, Pending(RuntimeError("a bug"))), (b, Pending())], heartbeat)  # type: ignore[arg-type]
    assert inspector.control.stop.is_set()
    assert heartbeat.held == set()
