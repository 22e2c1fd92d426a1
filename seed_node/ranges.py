"""Range mode (``--mode ranges``): one range read at a time, each with a fresh window.

A range's finish follows its last batch's answer on the reporter thread, while
the worker already leases and reads the next range (the reporter sends in
order: the next range's batches wait behind that finish). The range's
heartbeat goes on until then; a stop waits for both (Worker.run).
"""

from __future__ import annotations

import logging

from usenet.rules import RuleSet

from .aggregate import Window
from .http import CoordinatorError, LeaseLost, Unauthenticated
from .leases import Heartbeat, Lease
from .reading import RangeReader, Stopped
from .reporting import Reporter
from .sources import NewsServerFailure
from .worker import Worker

log = logging.getLogger(__name__)


class RangeWorker(Worker):
    """Range mode: one range at a time, each with a fresh window."""

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        while not self.control.stop.is_set():
            offer = self.call("/ranges/lease")
            data = offer.get("lease")
            if data is None:
                if not self.idle(offer):
                    return
                continue
            lease = Lease(
                id=data["id"],
                group=data["group"],
                start=data["start"],
                end=data["end"],
                epoch=data["epoch"],
                rules=data.get("rules"),
            )
            heartbeat.hold(lease.path, lease.epoch, lease)
            handed_on = False
            try:
                handed_on = self.read_range(lease, reporter, heartbeat)
            finally:
                if not handed_on:
                    heartbeat.drop(lease.path)

    def rules_for(self, lease: Lease) -> RuleSet:
        # Range leases carry no rules in protocol v1; the coordinator re-derives
        # identities itself, so the default rules only decide what is grouped here.
        return RuleSet.from_dict(lease.rules) if lease.rules else RuleSet.default()

    def read_range(self, lease: Lease, reporter: Reporter, heartbeat: Heartbeat) -> bool:
        """Read and report the range; True once its finish is handed to the reporter
        (which then ends its heartbeat), False when it ended here."""
        window = Window(self.rules_for(lease), lease.group, max_open=self.settings.max_open)
        reader = self.reader(lease, window, reporter, carry=False)
        log.info(
            "%s: range %s of %s, articles %s-%s",
            self.name,
            lease.id,
            lease.group,
            lease.start,
            lease.end,
        )
        try:
            reader.read()
            reader.report(final=True)
            reporter.after(lease, lambda: self.close_range(lease, window.headers, heartbeat))
            self.backoff.reset()
            return True
        except LeaseLost as exc:
            log.warning("%s: range %s lost: %s", self.name, lease.id, exc.detail)
        except Stopped:
            self.leave(lease, reader, error=lease.rejected)
        except NewsServerFailure as exc:
            log.error("%s: range %s: %s", self.name, lease.id, exc)
            self.leave(lease, reader, error=str(exc))
            self.pause_after_failure("the news server failed")
        except CoordinatorError as exc:
            if isinstance(exc, Unauthenticated):
                raise
            log.error("%s: range %s refused, this is a bug: %s", self.name, lease.id, exc)
            self.release(lease, str(exc), uncounted=False)
        return False

    def leave(self, lease: Lease, reader: RangeReader, error: str | None) -> None:
        """Give the range back after reporting what was read (all open files as fragments)."""
        if lease.lost:
            log.info("%s: range %s was lost; dropping it", self.name, lease.id)
            return
        if not reader.fetched:
            self.release(lease, error, uncounted=True)
            return
        if lease.rejected is None:
            self.report_before_release(reader, drain=True)
        if lease.lost:
            return
        self.release(lease, error or lease.rejected, uncounted=False)
        log.info("%s: range %s released at %s", self.name, lease.id, reader.reported)
