"""``seed-node --mode inspect`` and ``--inspect-share`` against a scripted coordinator.

The articles are real (par2cmdline's index, an nfo over several articles, a
zip) and posted to INN2; the coordinator is scripted, so each call the agent
makes (lease, heartbeat, body relay, report, release) is checked as it was sent.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seed_node.cli import main
from seed_node.control import Control
from tests.support.inn2 import InnServer
from tests.support.inspect_posts import (
    IMDB,
    REAL_NAME,
    PostedFile,
    lease_articles,
    obfuscated_release,
)
from tests.support.scripted import NO_LEASE, Answer, ScriptedCoordinator

pytestmark = [pytest.mark.slow, pytest.mark.inn]

GROUP = "alt.binaries.inspect.agent"
LEASE_PATH = "/inspections/41"
HOLD_SECONDS = 30  # the most a held body waits for the heartbeats (a generous bound)


@pytest.fixture(scope="module")
def posted(inn_server: InnServer) -> dict[str, PostedFile]:
    inn_server.create_group(GROUP)
    files = obfuscated_release(GROUP, seed=21)
    articles = [article for posted in files.values() for article in posted.articles]
    assert inn_server.post_articles(None, articles).accepted == len(articles)
    return files


def one_inspection(posted: dict[str, PostedFile], **changes: Any) -> Callable[[Any], Answer]:
    handed: list[int] = []

    def lease(_body: Any) -> Answer:
        if handed:
            return NO_LEASE
        handed.append(1)
        data = {"id": 41, "epoch": 2, "release": 9001, "group": GROUP}
        data["articles"] = lease_articles(posted)
        data.update(changes)
        return 200, {"lease": data, "retry_after": None, "paused": None}

    return lease


REPORTED = (200, {"release": {"id": 9001, "name": REAL_NAME, "renamed": True}})


def run_agent(
    coordinator: ScriptedCoordinator, token_file: Path, *args: str, control: Control | None = None
) -> int:
    return main(
        [
            "--coordinator",
            coordinator.url,
            "--token-file",
            str(token_file),
            "--exit-when-idle",
            "--max-backoff",
            "1",
            *args,
        ],
        control=control or Control(),
    )


def relay_from(
    inn_server: InnServer, hold: threading.Event | None = None
) -> Callable[[Any], Answer]:
    """The body relay as the coordinator serves it: BODY from its news server, raw bytes;
    with `hold`, each body waits until it is set (at most HOLD_SECONDS)."""
    from usenet.nntp import NNTPClient, NoSuchArticle

    def body(query: Any) -> Answer:
        if hold is not None:
            hold.wait(HOLD_SECONDS)
        with NNTPClient(inn_server.host, inn_server.port, timeout=10) as client:
            try:
                return 200, client.body(query["message_id"], 4 << 20)
            except NoSuchArticle as exc:
                return 404, {"error": "no_such_article", "detail": str(exc)}

    return body


def roles(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {result["role"]: result for result in report["results"]}


def test_inspect_mode_fetches_inspects_and_reports_each_role(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")
    assert report["epoch"] == 2 and report["missing"] == []
    found = roles(report)
    assert [f["name"] for f in found["par2"]["files"]] == [f"{REAL_NAME}.mkv"]
    assert [f["name"] for f in found["archive"]["files"]] == [f"{REAL_NAME}.mkv"]
    assert found["nfo"]["imdb_ids"] == [IMDB]
    assert not coordinator.posted(f"{LEASE_PATH}/release")
    assert len(coordinator.posted("/inspections/lease")) == 2  # then nothing was left


def test_through_the_relay_it_heartbeats_while_fetching_and_reports_missing_articles(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    articles = lease_articles(posted)
    articles[2]["message_ids"] = ["<expired@inspect.test>"]  # the archive's
    coordinator.routes["/inspections/lease"] = one_inspection(posted, articles=articles)
    # The first body is answered only once the agent has sent three heartbeats: the
    # lease is kept alive while a body is awaited, however slow the machine is.
    beaten = threading.Event()
    beats = itertools.count(1)

    def heartbeat(_: Any) -> Answer:
        if next(beats) >= 3:
            beaten.set()
        return 204, None

    coordinator.routes[f"{LEASE_PATH}/body"] = relay_from(inn_server, hold=beaten)
    coordinator.routes[f"{LEASE_PATH}/heartbeat"] = heartbeat
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--relay", "--heartbeat-seconds", "0.2"
    )
    assert status == 0
    asked = coordinator.posted(f"{LEASE_PATH}/body")
    assert [query["message_id"] for query in asked] == [
        message_id for item in articles for message_id in item["message_ids"]
    ]
    assert all(query["epoch"] == 2 for query in asked)
    assert beaten.is_set()  # three heartbeats came while the first body was awaited
    assert len(coordinator.posted(f"{LEASE_PATH}/heartbeat")) >= 3
    assert {"epoch": 2} in coordinator.posted(f"{LEASE_PATH}/heartbeat")
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")
    assert sorted(roles(report)) == ["nfo", "par2"]
    (missing,) = report["missing"]
    assert (missing["role"], missing["message_id"]) == ("archive", "<expired@inspect.test>")
    assert "no_such_article" in missing["error"]


def test_an_unreachable_news_server_releases_the_inspection_uncounted(
    coordinator: ScriptedCoordinator, token_file: Path, posted: dict[str, PostedFile]
) -> None:
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    coordinator.routes[f"{LEASE_PATH}/release"] = lambda _: (204, None)
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", "nntp://127.0.0.1:1"
    )
    assert status == 0
    (release,) = coordinator.posted(f"{LEASE_PATH}/release")
    assert release["uncounted"] is True and release["epoch"] == 2
    assert "cannot connect" in release["error"]
    assert not coordinator.posted(f"{LEASE_PATH}/report")


def test_a_relay_without_a_news_server_releases_the_inspection_uncounted(
    coordinator: ScriptedCoordinator, token_file: Path, posted: dict[str, PostedFile]
) -> None:
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    unavailable = (503, {"error": "no_news_server", "detail": "NEWS_SERVER_URL is not set"})
    coordinator.routes[f"{LEASE_PATH}/body"] = lambda _: unavailable
    coordinator.routes[f"{LEASE_PATH}/release"] = lambda _: (204, None)
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay")
    assert status == 0
    assert len(coordinator.posted(f"{LEASE_PATH}/body")) == 3  # RELAY_ATTEMPTS, then given up
    (release,) = coordinator.posted(f"{LEASE_PATH}/release")
    assert release["uncounted"] is True
    assert "NEWS_SERVER_URL is not set" in release["error"]


def test_a_refused_report_releases_the_inspection_with_the_coordinators_sentence(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    refused = (400, {"error": "invalid", "detail": "results[0].files[0].size is negative."})
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: refused
    coordinator.routes[f"{LEASE_PATH}/release"] = lambda _: (204, None)
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    (release,) = coordinator.posted(f"{LEASE_PATH}/release")
    assert release["uncounted"] is False
    assert "size is negative" in release["error"]


def test_a_lease_the_agent_cannot_read_is_released_with_why(
    coordinator: ScriptedCoordinator, token_file: Path, posted: dict[str, PostedFile]
) -> None:
    articles = [{"role": "sample", "message_ids": ["<a@b>"], "bytes": 1, "name": "x"}]
    coordinator.routes["/inspections/lease"] = one_inspection(posted, articles=articles)
    coordinator.routes[f"{LEASE_PATH}/release"] = lambda _: (204, None)
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay")
    assert status == 0
    (release,) = coordinator.posted(f"{LEASE_PATH}/release")
    assert "'sample' is unknown" in release["error"] and release["uncounted"] is False


def test_a_stop_while_fetching_still_reports_the_inspection(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    control = Control()
    relay = relay_from(inn_server)

    def body_then_stop(query: Any) -> Answer:
        control.stop.set()  # as a first SIGTERM would, while the first body is on its way
        return relay(query)

    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    coordinator.routes[f"{LEASE_PATH}/body"] = body_then_stop
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: REPORTED
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay", control=control)
    assert status == 0
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")
    assert sorted(roles(report)) == ["archive", "nfo", "par2"]
    # The one call ahead, made as the inspection began, handed nothing out; none after it.
    assert len(coordinator.posted("/inspections/lease")) == 2


def test_inspect_share_inspects_when_no_range_is_handed_out(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: REPORTED
    status = run_agent(coordinator, token_file, "--inspect-share", "--news-server", inn_server.url)
    assert status == 0
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")
    assert roles(report)["nfo"]["imdb_ids"] == [IMDB]
    # Ranges first each time: range, inspection (one), range again, inspection (none).
    leases = [path for _, path, _ in coordinator.calls if path.endswith("/lease")]
    assert leases == ["/ranges/lease", "/inspections/lease"] * 2


def test_inspect_share_is_for_range_mode_only(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    assert (
        run_agent(coordinator, token_file, "--mode", "inspect", "--inspect-share", "--relay") == 2
    )


def test_worker_processes_inspect_side_by_side(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    queue = [41, 42, 43]

    def lease(_body: Any) -> Answer:
        if not queue:
            return NO_LEASE
        data = {"id": queue.pop(0), "epoch": 2, "release": 9001, "group": GROUP}
        data["articles"] = lease_articles(posted)
        return 200, {"lease": data, "retry_after": None, "paused": None}

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator,
        token_file,
        "--mode",
        "inspect",
        "--workers",
        "2",
        "--news-server",
        f"{inn_server.url}/?connections=2",
    )
    assert status == 0
    reported = sorted(path for _, path, _ in coordinator.calls if path.endswith("/report"))
    assert reported == [f"/inspections/{n}/report" for n in (41, 42, 43)]
    assert all(
        roles(report)["nfo"]["imdb_ids"] == [IMDB] for report in coordinator.posted("/report")
    )


def lease_queue(posted: dict[str, PostedFile], *numbers: int) -> Callable[[Any], Answer]:
    """Lease calls hand out inspections `numbers` in turn, then nothing."""
    queue = list(numbers)

    def lease(_body: Any) -> Answer:
        if not queue:
            return NO_LEASE
        data = {"id": queue.pop(0), "epoch": 2, "release": 9001, "group": GROUP}
        data["articles"] = lease_articles(posted)
        return 200, {"lease": data, "retry_after": None, "paused": None}

    return lease


def lease_calls_then(
    route: Callable[[Any], Answer], count: int
) -> tuple[Callable[[Any], Answer], threading.Event]:
    """`route`, and an event set once it has been called `count` times."""
    called = threading.Event()
    seen: list[int] = []

    def counted(body: Any) -> Answer:
        seen.append(1)
        if len(seen) >= count:
            called.set()
        return route(body)

    return counted, called


def test_the_next_inspection_is_leased_while_the_current_ones_bodies_are_fetched(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    lease, second_asked = lease_calls_then(lease_queue(posted, 41, 42), 2)
    relay = relay_from(inn_server)
    waited: list[bool] = []

    def body(query: Any) -> Answer:
        waited.append(second_asked.wait(5))  # inspection 41's bodies wait for the call ahead
        return relay(query)

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes[f"{LEASE_PATH}/body"] = body
    coordinator.routes["/inspections/42/body"] = relay
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay")
    assert status == 0
    fetched = sum(len(item["message_ids"]) for item in lease_articles(posted))
    assert waited == [True] * fetched  # asked while 41's bodies were on their way
    calls = [path for _, path, _ in coordinator.calls]
    leases = [n for n, path in enumerate(calls) if path == "/inspections/lease"]
    assert len(leases) == 3
    # Each next lease is answered before the current report goes out (the report
    # and the lease after next race: the report is on the reporter thread).
    assert leases[1] < calls.index(f"{LEASE_PATH}/report")
    assert leases[2] < calls.index("/inspections/42/report")


def test_a_stop_gives_the_inspection_leased_ahead_back_uncounted(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    control = Control()
    handing = lease_queue(posted, 41, 42)
    leased: list[int] = []

    def lease(body: Any) -> Answer:
        leased.append(1)
        if len(leased) == 2:
            control.stop.set()  # as a first SIGTERM would, while 41 is being inspected
        return handing(body)

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes["/inspections/42/release"] = lambda _: (204, None)
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator,
        token_file,
        "--mode",
        "inspect",
        "--news-server",
        inn_server.url,
        control=control,
    )
    assert status == 0
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")  # the current one still reported
    assert sorted(roles(report)) == ["archive", "nfo", "par2"]
    assert coordinator.posted("/inspections/42/release") == [{"epoch": 2, "uncounted": True}]
    assert not coordinator.posted("/inspections/42/report")
    assert len(leased) == 2


def test_an_inspection_lost_while_held_ahead_is_dropped_unfetched(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    lost = threading.Event()
    relay = relay_from(inn_server)
    waited: list[bool] = []

    def refused(_body: Any) -> Answer:
        lost.set()
        return 409, {"error": "lease_lost", "detail": "the lease was taken over"}

    def body(query: Any) -> Answer:
        waited.append(lost.wait(5))  # 41's bodies wait until 42 has been taken back
        return relay(query)

    coordinator.routes["/inspections/lease"] = lease_queue(posted, 41, 42)
    coordinator.routes[f"{LEASE_PATH}/body"] = body
    coordinator.routes[f"{LEASE_PATH}/heartbeat"] = lambda _: (204, None)
    coordinator.routes["/inspections/42/heartbeat"] = refused
    coordinator.routes[f"{LEASE_PATH}/report"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--relay", "--heartbeat-seconds", "0.05"
    )
    assert status == 0
    assert waited == [True] * sum(len(item["message_ids"]) for item in lease_articles(posted))
    (report,) = coordinator.posted(f"{LEASE_PATH}/report")
    assert sorted(roles(report)) == ["archive", "nfo", "par2"]
    touched = {path for _, path, _ in coordinator.calls if path.startswith("/inspections/42/")}
    assert touched == {"/inspections/42/heartbeat"}  # no body, report or release for it


def test_a_node_at_its_cap_leases_the_next_inspection_after_the_current_one(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    handing = lease_queue(posted, 41, 42)
    leased: list[int] = []

    def lease(body: Any) -> Answer:
        leased.append(1)
        if len(leased) == 2:  # the call ahead: over the node's cap
            return 429, {"error": "too_many_leases", "detail": "8 inspection leases held"}
        return handing(body)

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    reported = [path for _, path, _ in coordinator.calls if path.endswith("/report")]
    assert sorted(reported) == [f"{LEASE_PATH}/report", "/inspections/42/report"]
    assert len(leased) == 4  # 41; 429 (not waited on); 42 after 41; nothing ahead of 42


def test_at_its_cap_the_node_waits_for_its_reports_in_flight_before_leasing_again(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    """The reports being sent free the node's leases: the lease call after a 429 ahead
    waits for them, rather than meet the cap again and wait out its Retry-After."""

    handing = lease_queue(posted, 41, 42)
    reported = threading.Event()
    leased: list[bool] = []

    def lease(body: Any) -> Answer:
        leased.append(reported.is_set())
        if len(leased) == 2:  # the call ahead: over the node's cap
            return 429, {"error": "too_many_leases", "detail": "8 inspection leases held"}
        return handing(body)

    def report(_body: Any) -> Answer:
        time.sleep(0.5)  # a coordinator slow to answer
        reported.set()
        return REPORTED

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes[f"{LEASE_PATH}/report"] = report
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    assert leased[:3] == [False, False, True]  # the third call once 41's report was answered


def test_an_inspections_bodies_are_parsed_while_the_next_ones_are_fetched(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from seed_node import inspecting

    next_fetched = threading.Event()
    relay = relay_from(inn_server)
    waited: list[bool] = []
    parse = inspecting.inspect_article

    def first_parse_waits(role: str, body: bytes, *, stuffed: bool) -> Any:
        if not waited:  # 41's par2: parsed only once 42's first body was asked for
            waited.append(next_fetched.wait(HOLD_SECONDS))
        return parse(role, body, stuffed=stuffed)

    def next_body(query: Any) -> Answer:
        next_fetched.set()
        return relay(query)

    monkeypatch.setattr(inspecting, "inspect_article", first_parse_waits)
    coordinator.routes["/inspections/lease"] = lease_queue(posted, 41, 42)
    coordinator.routes[f"{LEASE_PATH}/body"] = relay
    coordinator.routes["/inspections/42/body"] = next_body
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay")
    assert status == 0
    assert waited == [True]  # the worker fetched 42 while 41's bodies waited to be parsed
    for path in (f"{LEASE_PATH}/report", "/inspections/42/report"):
        (report,) = coordinator.posted(path)
        assert sorted(roles(report)) == ["archive", "nfo", "par2"]
        assert [f["name"] for f in roles(report)["par2"]["files"]] == [f"{REAL_NAME}.mkv"]


def test_a_bug_while_parsing_releases_the_inspection_with_it(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from seed_node import inspecting

    def broken(role: str, body: bytes, *, stuffed: bool) -> Any:
        raise RuntimeError("a bug in the parser")

    monkeypatch.setattr(inspecting, "inspect_article", broken)
    coordinator.routes["/inspections/lease"] = one_inspection(posted)
    coordinator.routes[f"{LEASE_PATH}/release"] = lambda _: (204, None)
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    (release,) = coordinator.posted(f"{LEASE_PATH}/release")
    assert release["uncounted"] is False and release["epoch"] == 2
    assert release["error"] == "the agent failed: RuntimeError: a bug in the parser"
    assert not coordinator.posted(f"{LEASE_PATH}/report")


def lease_batches(
    posted: dict[str, PostedFile], *batches: tuple[int, ...]
) -> Callable[[Any], Answer]:
    """Lease calls that read a `count` (docs/api.md) hand out `batches` in turn (as many of
    each as the call asked for, the rest of it with the next call), then nothing."""
    queue = [list(batch) for batch in batches]

    def lease(body: Any) -> Answer:
        while queue and not queue[0]:
            queue.pop(0)
        if not queue:
            return 200, {"lease": None, "leases": [], "retry_after": None, "paused": None}
        count = (body or {}).get("count", 1)
        numbers, queue[0] = queue[0][:count], queue[0][count:]
        leases = [
            {"id": n, "epoch": 2, "release": 9000 + n, "group": GROUP,
             "articles": lease_articles(posted)}
            for n in numbers
        ]  # fmt: skip
        return 200, {"lease": leases[0], "leases": leases, "retry_after": None, "paused": None}

    return lease


def reports_together(refused: dict[int, Answer] | None = None) -> Callable[[Any], Answer]:
    """POST /inspections/reports as the coordinator answers it: each report its own
    status, 200 unless `refused` names another answer for its id."""
    refused = refused or {}

    def answer(body: Any) -> Answer:
        answers = []
        for item in body["reports"]:
            status, error = refused.get(item["id"], REPORTED)
            answers.append({"id": item["id"], "status": status, **error})
        return 200, {"reports": answers}

    return answer


def test_a_lease_call_asks_for_several_and_their_reports_go_out_together(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    from seed_node.inspecting import LEASE_COUNT

    numbers = tuple(range(41, 41 + LEASE_COUNT + 2))
    coordinator.routes["/inspections/lease"] = lease_batches(posted, numbers)
    coordinator.routes["/inspections/reports"] = reports_together()
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    asked = coordinator.posted("/inspections/lease")
    assert asked[:2] == [{"count": LEASE_COUNT}] * 2
    assert len(asked) == 3  # LEASE_COUNT, then the 2 left, then none: not one call each
    together = coordinator.posted("/inspections/reports")
    assert [[item["id"] for item in call["reports"]] for call in together] == [
        list(numbers[:LEASE_COUNT]), list(numbers[LEASE_COUNT:]),
    ]  # fmt: skip
    assert not coordinator.posted("/report")  # none alone
    for call in together:
        for item in call["reports"]:
            assert item["epoch"] == 2
            assert sorted(roles(item)) == ["archive", "nfo", "par2"]


def test_reports_sent_together_are_each_handled_as_if_sent_alone(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    refused = {
        42: (400, {"error": "invalid", "detail": "results[0].files[0].size must be whole"}),
        43: (409, {"error": "lease_lost", "detail": "Inspection 43 is leased to another node"}),
    }
    coordinator.routes["/inspections/lease"] = lease_batches(posted, (41, 42, 43))
    coordinator.routes["/inspections/reports"] = reports_together(refused)
    coordinator.routes["*"] = lambda _: (204, None)
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    (call,) = coordinator.posted("/inspections/reports")
    assert [item["id"] for item in call["reports"]] == [41, 42, 43]
    assert coordinator.posted("/inspections/42/release") == [
        {"epoch": 2, "uncounted": False,
         "error": "400 invalid: results[0].files[0].size must be whole"},
    ]  # fmt: skip
    touched = {path for _, path, _ in coordinator.calls if path.startswith("/inspections/4")}
    assert touched == {"/inspections/42/release"}  # 41 done, 43 lost: nothing more for them


def test_a_coordinator_without_reports_together_gets_each_alone_from_then_on(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    from seed_node.inspecting import LEASE_COUNT

    numbers = tuple(range(41, 41 + 2 * LEASE_COUNT))
    coordinator.routes["/inspections/lease"] = lease_batches(posted, numbers)
    coordinator.routes["/inspections/reports"] = lambda _: (
        404, {"error": "not_found", "detail": "Nothing exists at this address."},
    )  # fmt: skip
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    assert len(coordinator.posted("/inspections/reports")) == 1  # asked once, then never
    reported = sorted(path for _, path, _ in coordinator.calls if path.endswith("/report"))
    assert reported == [f"/inspections/{n}/report" for n in numbers]


def test_a_stop_gives_back_every_inspection_held_ahead_uncounted(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    control = Control()
    handing = lease_batches(posted, (41, 42, 43))

    def lease(body: Any) -> Answer:
        control.stop.set()  # as a first SIGTERM would, once the three are handed out
        return handing(body)

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator,
        token_file,
        "--mode",
        "inspect",
        "--news-server",
        inn_server.url,
        control=control,
    )
    assert status == 0
    (report,) = coordinator.posted("/inspections/41/report")  # the one started is reported
    assert sorted(roles(report)) == ["archive", "nfo", "par2"]
    for n in (42, 43):
        assert coordinator.posted(f"/inspections/{n}/release") == [{"epoch": 2, "uncounted": True}]
        assert not coordinator.posted(f"/inspections/{n}/report")
    assert len(coordinator.posted("/inspections/lease")) == 1


def test_inspections_handed_out_past_the_count_asked_are_given_back(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    from seed_node.inspecting import LEASE_COUNT

    too_many = tuple(range(41, 41 + LEASE_COUNT + 1))
    handing = lease_batches(posted, too_many)

    def lease(body: Any) -> Answer:
        return handing({"count": LEASE_COUNT + 1})  # a coordinator that ignores the count

    coordinator.routes["/inspections/lease"] = lease
    coordinator.routes["/inspections/reports"] = reports_together()
    coordinator.routes["*"] = lambda _: REPORTED
    status = run_agent(
        coordinator, token_file, "--mode", "inspect", "--news-server", inn_server.url
    )
    assert status == 0
    last = too_many[-1]
    assert coordinator.posted(f"/inspections/{last}/release") == [{"epoch": 2, "uncounted": True}]
    (call,) = coordinator.posted("/inspections/reports")
    assert [item["id"] for item in call["reports"]] == list(too_many[:-1])


def test_a_stop_reports_every_inspection_already_fetched_and_gives_the_rest_back(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    inn_server: InnServer,
    posted: dict[str, PostedFile],
) -> None:
    control = Control()
    relay = relay_from(inn_server)

    def body_of_42(query: Any) -> Answer:
        control.stop.set()  # as a first SIGTERM would, while 42 (the second) is fetched
        return relay(query)

    coordinator.routes["/inspections/lease"] = lease_batches(posted, (41, 42, 43))
    coordinator.routes["/inspections/41/body"] = relay
    coordinator.routes["/inspections/42/body"] = body_of_42
    coordinator.routes["/inspections/reports"] = reports_together()
    coordinator.routes["*"] = lambda _: (204, None)
    status = run_agent(coordinator, token_file, "--mode", "inspect", "--relay", control=control)
    assert status == 0
    (call,) = coordinator.posted("/inspections/reports")  # 41, fetched before, goes too
    assert [item["id"] for item in call["reports"]] == [41, 42]
    assert all(sorted(roles(item)) == ["archive", "nfo", "par2"] for item in call["reports"])
    assert coordinator.posted("/inspections/43/release") == [{"epoch": 2, "uncounted": True}]
    assert not coordinator.posted("/inspections/43/body")
