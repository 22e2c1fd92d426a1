"""What a node's workers share: the settings, the stop request and exit code, the counters."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

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


class Stats:
    """Counters across workers for the periodic log line."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.headers = 0
        self.ranges = 0
        self.batches = 0
        self.files = 0
        self.fragments = 0
        self.skipped = 0
        self.snapshot_resets = 0  # unreadable lane snapshots replaced by an empty window

    def add(self, **amounts: int) -> None:
        with self._lock:
            for name, amount in amounts.items():
                setattr(self, name, getattr(self, name) + amount)

    def snapshot(self) -> dict[str, int]:
        with self._lock:
            return {
                "headers": self.headers,
                "ranges": self.ranges,
                "batches": self.batches,
                "files": self.files,
                "fragments": self.fragments,
                "skipped": self.skipped,
                "snapshot_resets": self.snapshot_resets,
            }
