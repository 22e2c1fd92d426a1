"""What a node's workers share: the settings, the stop request and exit code, the counters."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, MutableSequence, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from .articles import ArticleSource
    from .sources import OverviewSource

# seed-node's exit codes (docs/seed-node.md); systemd units rely on 2 and 3.
EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_USAGE = 2
EXIT_UNAUTHENTICATED = 3


@dataclass
class Settings:
    """The options of a run that the workers read (seed_node/cli.py fills them in)."""

    batch_headers: int = 20_000
    batch_seconds: float = 30.0
    snapshot_every: int = 10
    heartbeat_seconds: float = 30.0
    fragment_lag: int = 100_000
    max_open: int = 200_000
    idle_seconds: float = 30.0
    exit_when_idle: bool = False
    duplicate_batches: bool = False
    max_headers_per_second: float = 0.0
    work_dir: Path | None = None
    max_backoff: float = 60.0
    inspect_share: bool = False  # range mode: inspect when no range is handed out
    fetch_seconds: float = 60.0  # the longest one article body may take to arrive


@dataclass(frozen=True)
class Context:
    """What a worker and the readers it makes share: where overviews come
    from, the run's settings, the stop request, the counters."""

    source: OverviewSource
    settings: Settings
    control: Control
    stats: Stats
    articles: ArticleSource | None = None  # article bodies, for inspections


class Control:
    """Shared by all workers: the stop request and the exit code."""

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.abort = threading.Event()  # a second signal: stop retrying calls too
        self.exit_code = EXIT_OK
        self._lock = threading.Lock()

    def fail(self, code: int) -> None:
        with self._lock:
            if self.exit_code == EXIT_OK:
                self.exit_code = code
        self.stop.set()

    def token_refused(self, detail: str) -> None:
        """The coordinator refused the node's token (401): every call would be, so the
        node stops with EXIT_UNAUTHENTICATED."""
        log.error("the coordinator refused the token (401): %s", detail)
        self.fail(EXIT_UNAUTHENTICATED)


# Counters (whole numbers) and timers (seconds, for ``--stats``) of a node's workers.
STAT_NAMES = (
    "headers",
    "ranges",
    "batches",
    "files",
    "fragments",
    "skipped",
    "inspections",  # inspections reported
    "articles",  # article bodies fetched for inspections
    "article_bytes",  # their bytes
    "snapshot_resets",  # unreadable lane snapshots replaced by an empty window
    "snapshot_dropped",  # files of restored snapshots dropped: not the lane's
    "news_seconds",  # the reading loop waiting on the news server (or the relay)
    "parse_seconds",  # the reading loop parsing, aggregating and building batches
    "handoff_seconds",  # the worker blocked handing batches to the reporter or waiting for it
    "call_seconds",  # the worker waiting on its own calls: lease, next, finish (window), release
    "inspect_seconds",  # decoding and parsing article bodies (inspections)
    "batch_seconds",  # the reporter thread posting batches (overlaps the reading)
)
_TIMERS = frozenset(name for name in STAT_NAMES if name.endswith("_seconds"))


class Stats:
    """Counters across a process's workers, kept in ``values`` (one slot per STAT_NAMES).

    ``values`` may be shared memory (a ``multiprocessing`` RawArray of doubles):
    a worker process then adds to it and the parent reads it (seed_node/processes.py).
    """

    def __init__(self, values: MutableSequence[float] | None = None) -> None:
        self._lock = threading.Lock()
        self.values = values if values is not None else [0.0] * len(STAT_NAMES)
        self._index = {name: index for index, name in enumerate(STAT_NAMES)}

    def add(self, **amounts: float) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self.values[self._index[name]] += amount

    def snapshot(self) -> dict[str, int]:
        """The counters (timers left out): the periodic log line's figures."""
        return {k: int(v) for k, v in self.everything().items() if k not in _TIMERS}

    def everything(self) -> dict[str, float]:
        with self._lock:
            return dict(zip(STAT_NAMES, self.values, strict=True))

    @classmethod
    def summed(cls, parts: Iterable[Sequence[float]]) -> Stats:
        """One Stats holding the sums of several processes' values."""
        total = [0.0] * len(STAT_NAMES)
        for values in parts:
            for index, value in enumerate(values):
                total[index] += value
        return cls(total)


def timing_lines(stats: dict[str, float]) -> list[str]:
    """``--stats``: where the workers' time went, as lines for the log."""
    waits = (
        ("waiting on the news server", stats["news_seconds"]),
        ("parsing and aggregating", stats["parse_seconds"]),
        ("decoding and parsing article bodies", stats["inspect_seconds"]),
        ("waiting on batch answers", stats["handoff_seconds"]),
        ("waiting on lease and finish calls", stats["call_seconds"]),
    )
    busy = sum(seconds for _, seconds in waits) or 1.0
    return [
        f"headers read: {int(stats['headers'])}",
        *(f"{label}: {seconds:.2f}s ({100 * seconds / busy:.1f}%)" for label, seconds in waits),
        f"posting batches (reporter thread, beside the reading): {stats['batch_seconds']:.2f}s",
    ]
