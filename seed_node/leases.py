"""A range lease being read, and the thread that heartbeats every lease a worker holds
(ranges, lanes, inspections)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from .http import Aborted, Coordinator, CoordinatorError, LeaseLost

log = logging.getLogger(__name__)


@dataclass
class Lease:
    """One range being read; ``lost``/``rejected`` are set by the helper threads."""

    id: int
    group: str
    start: int
    end: int
    epoch: int
    lost: bool = False
    rejected: str | None = None
    rules: dict[str, Any] | None = None  # a rule set the lease carries, if any

    @property
    def path(self) -> str:
        return f"/ranges/{self.id}"


class Held(Protocol):
    """A lease the heartbeat marks ``lost`` when the coordinator refuses it."""

    id: int
    lost: bool


class Heartbeat:
    """Heartbeats every held lease (a range, a lane) every few seconds."""

    def __init__(self, coordinator: Coordinator, interval: float) -> None:
        self.coordinator = coordinator
        self.interval = interval
        self._held: dict[str, tuple[str, dict[str, Any], Held | None]] = {}
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def hold(self, path: str, epoch: int, lease: Held | None = None) -> None:
        with self._lock:
            self._held[path] = (f"{path}/heartbeat", {"epoch": epoch}, lease)

    def drop(self, path: str) -> None:
        with self._lock:
            self._held.pop(path, None)

    def close(self) -> None:
        """End the heartbeats: one being retried (the coordinator unreachable) gives up
        at once, rather than calling a coordinator that may be gone for good."""
        self._done.set()

    def _run(self) -> None:
        while not self._done.wait(self.interval):
            with self._lock:
                held = list(self._held.items())
            for key, (path, body, lease) in held:
                try:
                    self.coordinator.post(path, body, stop=self._done)
                except Aborted:
                    if self._done.is_set():
                        return
                    log.warning("%s: heartbeat abandoned: the node is stopping now", key)
                except LeaseLost:
                    log.warning("%s: lease lost (heartbeat refused)", key)
                    if lease is not None:
                        lease.lost = True
                    self.drop(key)
                except CoordinatorError as exc:
                    log.warning("%s: heartbeat failed: %s", key, exc)
                except Exception:
                    log.exception("%s: heartbeat failed", key)
