"""``--workers N`` runs N worker processes; a stop (SIGTERM, a dead parent) leaves none behind.

The agent runs as a real process here (its children are what is checked), against
the scripted coordinator of test_agent.py and the in-repo NNTP server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.nntpd import NNTPServer
from tests.support.scripted import NO_LEASE, Answer, ScriptedCoordinator, binary_articles
from usenet.numbers import ascii_digits

ROOT = Path(__file__).resolve().parents[2]
IDLE = (200, {"lease": None, "retry_after": 0.2, "paused": None})


def children_of(pid: int) -> list[int]:
    """Live (not zombie) processes whose parent is ``pid``, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not ascii_digits(entry):
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.append(int(entry))
    return found


def worker_processes(pids: list[int]) -> list[int]:
    return [pid for pid in pids if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def left_behind(pids: list[int], grace: float = 10) -> list[int]:
    """Those of ``pids`` still running after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def start_agent(scripted: ScriptedCoordinator, token: Path, *args: str) -> subprocess.Popen[str]:
    code = "import sys\nfrom seed_node.cli import main\nsys.exit(main(sys.argv[1:]))\n"
    argv = ["--coordinator", scripted.url, "--token-file", str(token), "--max-backoff", "1"]
    return subprocess.Popen(
        [sys.executable, "-c", code, *argv, *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def wait_for(condition: Callable[[], bool], agent: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if condition():
            return
        if agent.poll() is not None:
            raise AssertionError(f"the agent exited before {what}:\n{agent.communicate()[0]}")
        time.sleep(0.05)
    agent.kill()
    raise AssertionError(f"never {what}:\n{agent.communicate()[0]}")


@pytest.mark.slow
def test_two_workers_are_two_processes_and_sigterm_leaves_none(
    coordinator: ScriptedCoordinator,
    token_file: Path,
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: IDLE
    agent = start_agent(coordinator, token_file, "--relay", "--workers", "2")
    try:
        started = lambda: len(worker_processes(children_of(agent.pid))) == 2  # noqa: E731
        wait_for(started, agent, "started two workers")
        # Both are working: each asks for leases (every 0.2 s while idle).
        wait_for(lambda: len(coordinator.posted("/ranges/lease")) >= 6, agent, "asked for leases")
        children = children_of(agent.pid)  # the workers, and multiprocessing's resource tracker
        assert len(worker_processes(children)) == 2, children
        agent.send_signal(signal.SIGTERM)
        output = agent.communicate(timeout=60)[0]
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == 0, output
    assert not left_behind(children), output


@pytest.mark.slow
def test_workers_whose_parent_is_killed_finish_up_and_exit(
    coordinator: ScriptedCoordinator,
    token_file: Path,
) -> None:
    coordinator.routes["/ranges/lease"] = lambda _: IDLE
    agent = start_agent(coordinator, token_file, "--relay", "--workers", "2")
    try:
        started = lambda: len(worker_processes(children_of(agent.pid))) == 2  # noqa: E731
        wait_for(started, agent, "started two workers")
        wait_for(lambda: len(coordinator.posted("/ranges/lease")) >= 4, agent, "asked for leases")
        workers = children_of(agent.pid)
    finally:
        agent.kill()
        agent.communicate()
    assert not left_behind(workers)


def ranges(count: int, size: int) -> Callable[[Any], Answer]:
    """Hands out ``count`` leases of ``size`` articles each (the same articles, new ids)."""
    lock = threading.Lock()
    handed: list[int] = []

    def lease(_body: Any) -> Answer:
        with lock:
            if len(handed) == count:
                return NO_LEASE
            handed.append(1)
            number = len(handed)
        body = {"id": number, "group": "alt.binaries.x", "start": 1, "end": size, "epoch": 1}
        return 200, {"lease": body, "retry_after": None, "paused": None}

    return lease


@pytest.mark.slow
def test_worker_processes_read_report_and_finish_every_range(
    coordinator: ScriptedCoordinator,
    token_file: Path,
) -> None:
    articles = binary_articles()
    coordinator.routes["/ranges/lease"] = ranges(6, 400)
    coordinator.routes["*"] = lambda _: (200, {"next": 0, "stored": 0})
    with NNTPServer() as news:
        news.add_group("alt.binaries.x", articles)
        agent = start_agent(
            coordinator,
            token_file,
            "--news-server",
            f"nntp://{news.host}:{news.port}/?connections=2",
            "--workers",
            "2",
            "--batch-headers",
            "50",
            "--exit-when-idle",
            "--stats",
        )
        output = agent.communicate(timeout=120)[0]
    assert agent.returncode == 0, output
    for number in range(1, 7):
        batches = coordinator.posted(f"/ranges/{number}/batch")
        assert sum(batch["headers"] for batch in batches) == len(articles), output
        assert coordinator.posted(f"/ranges/{number}/finish") == [{"epoch": 1}]
    assert f"stats: headers read: {6 * len(articles)}\n" in output  # summed over workers
    assert "stats: parsing and aggregating: " in output
