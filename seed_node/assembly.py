"""What a node is built of, for the command (cli.py) and its worker processes (processes.py).

The settings from the parsed options, the coordinator client, the overview
source, the worker of the mode, the signal handlers and the logging: the one
place both build them, so neither imports the other.
"""

from __future__ import annotations

import argparse
import gc
import logging
import signal
import threading
from dataclasses import replace
from pathlib import Path
from types import FrameType
from typing import Any

from usenet.nntp import NewsServerConfig, NNTPPool
from usenet.nntp.pool import ConnectionGate

from .articles import ArticleSource, NewsServerArticles, RelayArticles
from .control import Context, Control, Settings, Stats, timing_lines
from .http import Coordinator
from .inspecting import InspectWorker
from .ranges import RangeWorker
from .sources import NewsServerSource, OverviewSource, RelaySource
from .window import WindowWorker
from .worker import Worker

log = logging.getLogger("seed_node")


class UsageError(Exception):
    """A bad option or environment value: the node stops with EXIT_USAGE and this sentence."""


# Collections of the youngest generation: one per this many new objects, not
# Python's 700. A worker makes several small objects a header (a line's fields, a
# segment) that mostly live until their batch: at 700 the collector ran 350 times
# in 200,000 headers and took 1-1.7 us of an agent's 15 a header, at 10,000 19
# times (docs/performance.md, "The agent's CPU per header"). The older
# generations keep their thresholds, counted in collections of the one below.
COLLECT_EVERY = 10_000


def collect_less_often() -> None:
    """Set this process's garbage collector for a worker reading headers."""
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(COLLECT_EVERY, middle, oldest)


def settings_from(args: argparse.Namespace) -> Settings:
    for name in ("workers", "batch_headers", "snapshot_every", "max_open"):
        if getattr(args, name) < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    for name in (
        "batch_seconds",
        "heartbeat_seconds",
        "log_interval",
        "http_timeout",
        "fetch_seconds",
    ):
        if getattr(args, name) <= 0:
            raise UsageError(f"--{name.replace('_', '-')} must be positive")
    return Settings(
        batch_headers=args.batch_headers,
        batch_seconds=args.batch_seconds,
        snapshot_every=args.snapshot_every,
        heartbeat_seconds=args.heartbeat_seconds,
        fragment_lag=max(0, args.fragment_lag),
        max_open=args.max_open,
        exit_when_idle=args.exit_when_idle,
        duplicate_batches=args.duplicate_batches,
        max_headers_per_second=max(0.0, args.max_headers_per_second),
        work_dir=Path(args.work_dir) if args.work_dir else None,
        max_backoff=max(1.0, args.max_backoff),
        inspect_share=args.inspect_share,
        fetch_seconds=args.fetch_seconds,
    )


def configure_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, str(level).upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(processName)s %(threadName)s %(name)s: %(message)s",
    )


def make_coordinator(
    args: argparse.Namespace, token: str, settings: Settings, control: Control
) -> Coordinator:
    """The coordinator client at `args.coordinator` (the URLs, resolved by cli.py)."""
    try:
        return Coordinator(
            args.coordinator,
            token,
            timeout=args.http_timeout,
            max_backoff=settings.max_backoff,
            abort=control.abort,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def open_source(
    args: argparse.Namespace,
    coordinator: Coordinator,
    *,
    in_process: bool = True,
    gate: ConnectionGate | None = None,
) -> tuple[OverviewSource, str]:
    """Where a worker reads overviews from, and how to name it in the log.

    In-process (one worker) the pool is as large as the provider allows. A
    worker process reads one span at a time: one connection of the node's
    allowance, under `gate` when the processes outnumber the connections.
    """
    if args.relay:
        return RelaySource(coordinator), f"the relay of {coordinator.base_url}"
    try:
        config = NewsServerConfig.from_url(args.news_server)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not in_process:
        config = replace(config, connections=1)
    if args.mode == "inspect":
        # Bodies are yEnc, which does not compress: COMPRESS DEFLATE would only make
        # the news server deflate them (ten times slower on INN2; docs/performance.md).
        config = replace(config, compression=False)
    return NewsServerSource(NNTPPool(config, gate=gate)), str(config)


def open_articles(
    args: argparse.Namespace, source: OverviewSource, coordinator: Coordinator, settings: Settings
) -> ArticleSource | None:
    """Where inspections fetch article bodies: the overview source's own news-server
    pool, or the relay when the node reads through it; None when it never inspects."""
    if args.mode != "inspect" and not settings.inspect_share:
        return None
    if isinstance(source, NewsServerSource):
        return NewsServerArticles(source.pool, settings.fetch_seconds)
    return RelayArticles(coordinator, settings.fetch_seconds)


def make_worker(
    args: argparse.Namespace, number: int, coordinator: Coordinator, context: Context
) -> Worker:
    name = f"worker-{number}"
    if args.mode == "window":
        return WindowWorker(name, coordinator, context, lane=args.lane)
    if args.mode == "inspect":
        return InspectWorker(name, coordinator, context)
    return RangeWorker(name, coordinator, context)


def install_signal_handlers(
    control: Control, signals: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT)
) -> dict[int, Any]:
    """First SIGTERM/SIGINT: report, release and stop. A second one: stop waiting on calls."""

    def handle(signum: int, frame: FrameType | None) -> None:
        if control.stop.is_set():
            log.warning("second %s: abandoning calls in progress", signal.Signals(signum).name)
            control.abort.set()
        else:
            log.info("%s: finishing up", signal.Signals(signum).name)
            control.stop.set()

    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in signals:
            previous[signum] = signal.signal(signum, handle)
    return previous


def log_progress(last: dict[str, int], current: dict[str, int], elapsed: float) -> None:
    log.info(
        "%.0f headers/s, %s ranges done, %s batches, %s files, %s fragments, %s inspections",
        (current["headers"] - last["headers"]) / elapsed,
        current["ranges"],
        current["batches"],
        current["files"],
        current["fragments"],
        current["inspections"],
    )


def log_timing(stats: Stats) -> None:
    for line in timing_lines(stats.everything()):
        log.info("stats: %s", line)
