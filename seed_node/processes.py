"""Worker processes: with ``--workers N`` above 1, each worker runs in a process of its own.

Parsing holds the GIL, so worker threads share one core; processes use them all.
Each process runs one worker's whole loop (lease, read, parse, aggregate, report)
with its own coordinator client, news-server connection, reporter and heartbeat.
The parent starts them (spawn), passes its stop requests on as SIGTERM, sums
their counters for the log and exits with the first failure's code. A worker
whose parent is gone finishes up as on SIGTERM. docs/seed-node.md ("Workers").
"""

from __future__ import annotations

import argparse
import logging
import multiprocessing
import signal
import sys
import threading
import time
from multiprocessing.connection import wait
from multiprocessing.context import SpawnContext, SpawnProcess
from typing import Any

from usenet.nntp import NewsServerConfig
from usenet.nntp.errors import PoolExhausted

from . import assembly
from .control import EXIT_UNEXPECTED, STAT_NAMES, Context, Control, Stats

log = logging.getLogger("seed_node")

_TICK = 0.5  # seconds between the parent's looks at its stop request


class ProcessGate:
    """The news server's connection cap across worker processes (usenet's ConnectionGate)."""

    def __init__(self, context: SpawnContext, slots: int) -> None:
        self.slots = slots
        self._semaphore = context.BoundedSemaphore(slots)

    def acquire(self, timeout: float) -> int:
        if not self._semaphore.acquire(timeout=timeout):
            raise PoolExhausted(
                f"all {self.slots} news-server connections stayed in use for {timeout:g} seconds"
            )
        return 0

    def release(self, slot: int) -> None:
        self._semaphore.release()


def run_processes(args: argparse.Namespace, token: str, control: Control) -> int:
    """Start ``args.workers`` worker processes and wait for them; the node's exit code."""
    context = multiprocessing.get_context("spawn")
    shared = [context.RawArray("d", len(STAT_NAMES)) for _ in range(args.workers)]
    gate = None
    if not args.relay:
        connections = NewsServerConfig.from_url(args.news_server).connections
        if args.workers > connections:
            log.warning(
                "%s worker processes share %s news-server connections: some will wait, "
                "and each connection is closed after every span it reads",
                args.workers,
                connections,
            )
            gate = ProcessGate(context, connections)
    processes = [
        context.Process(
            target=worker_process,
            args=(args, token, number, shared[number - 1], gate),
            name=f"seed-node worker-{number}",
        )
        for number in range(1, args.workers + 1)
    ]
    try:
        for process in processes:
            process.start()
        supervise(processes, control, shared, args.log_interval)
    finally:
        for process in processes:
            if process.is_alive():  # only if the parent itself failed
                process.terminate()
            process.join()
    if getattr(args, "stats", False):
        assembly.log_timing(Stats.summed(shared))
    return control.exit_code


def supervise(
    processes: list[SpawnProcess],
    control: Control,
    shared: list[Any],
    interval: float,
) -> None:
    """Wait for the workers: pass stop requests on, take failures, log progress."""
    running = {process.sentinel: process for process in processes}
    signalled = 0  # SIGTERMs sent: one to finish up, a second to abandon calls
    last = Stats.summed(shared).snapshot()
    last_time = time.monotonic()
    while running:
        for sentinel in wait(list(running), timeout=_TICK):
            process = running.pop(sentinel)  # type: ignore[arg-type]
            process.join()
            code = process.exitcode or 0
            if code == -signal.SIGTERM and signalled:
                # Stopped before its handlers were set: it held nothing yet.
                log.info("%s stopped while starting", process.name)
            elif code:
                log.error("%s exited with %s", process.name, code)
                control.fail(code if 0 < code <= 3 else EXIT_UNEXPECTED)
        wanted = 2 if control.abort.is_set() else 1 if control.stop.is_set() else 0
        while signalled < wanted:
            signalled += 1
            for process in running.values():
                if process.pid is not None:
                    process.terminate()  # SIGTERM
        if time.monotonic() - last_time >= interval:
            current = Stats.summed(shared).snapshot()
            assembly.log_progress(last, current, time.monotonic() - last_time)
            last, last_time = current, time.monotonic()


# --- in the worker process ------------------------------------------------------


def worker_process(
    args: argparse.Namespace, token: str, number: int, shared: Any, gate: ProcessGate | None
) -> None:
    """A worker process's main: one worker until it is done or told to stop."""
    # Ctrl-C reaches the whole process group; the parent passes it on as SIGTERM.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    control = Control()
    assembly.install_signal_handlers(control, signals=(signal.SIGTERM,))
    assembly.configure_logging(args.log_level)
    assembly.collect_less_often()
    threading.Thread(target=_watch_parent, args=(control,), name="parent", daemon=True).start()
    settings = assembly.settings_from(args)
    coordinator = assembly.make_coordinator(args, token, settings, control)
    source, _described = assembly.open_source(args, coordinator, in_process=False, gate=gate)
    articles = assembly.open_articles(args, source, coordinator, settings)
    context = Context(source, settings, control, Stats(shared), articles)
    worker = assembly.make_worker(args, number, coordinator, context)
    thread = threading.Thread(target=worker.run, name=worker.name, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(timeout=_TICK)
    source.close()
    coordinator.close()
    sys.exit(control.exit_code)


def _watch_parent(control: Control) -> None:
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    wait([parent.sentinel])
    if not control.stop.is_set():
        log.warning("the seed-node parent process is gone; finishing up")
        control.stop.set()
