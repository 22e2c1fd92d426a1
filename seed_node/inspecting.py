"""Inspections (``--mode inspect``, or ``--inspect-share`` in range mode): fetch the
articles a lease names, decode and parse them, report what they show.

One inspection: lease it, heartbeat it while its bodies are fetched (from the
node's own news server, or the coordinator's relay), run ``inspection`` on
them, report one result per role fetched and the articles that could not be
had, or release it with the error. The par2 and archive bodies are parsed on
the reporter thread, before the report is sent, while the worker fetches the
next inspection's bodies. docs/inspection.md ("The node agent").
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, TypeGuard, cast

import inspection
from inspection import JoinedNfo, inspect_article, join_nfo, nfo, yenc

from .articles import ArticleMissing, ArticleSource
from .control import EXIT_OK, Context, Stats
from .http import (
    Aborted,
    Busy,
    Coordinator,
    CoordinatorError,
    LeaseLost,
    NotFound,
    Unauthenticated,
)
from .leases import Heartbeat
from .reporting import Reporter
from .sources import NewsServerFailure
from .worker import Worker

log = logging.getLogger(__name__)

# Bounds on what a lease may ask of the node (the coordinator's own are smaller).
MAX_ARTICLES = 3  # one per role
MAX_NFO_SEGMENTS = inspection.MAX_NFO_SEGMENTS
FETCH_SLACK = 64 * 1024  # bytes a body may run over the catalog's size of it
# Inspections ``--mode inspect`` asks for in one lease call (the coordinator's cap,
# INSPECT_LEASES_PER_NODE, may leave fewer): a lease call for every LEASE_COUNT
# inspections instead of one for each (docs/inspection.md, "Ahead").
LEASE_COUNT = 4
# Reports ``--mode inspect`` sends in one call (POST /inspections/reports): those of
# the inspections one lease call handed out, as many as one call may carry.
REPORTS_AT_ONCE = inspection.MAX_REPORTS_TOGETHER


class BadLease(Exception):
    """The coordinator handed out a lease this agent cannot read: a bug on one side.
    ``lease``: what of it can be released (None when not even its id and epoch)."""

    def __init__(self, message: str, lease: InspectLease | None = None) -> None:
        super().__init__(message)
        self.lease = lease


@dataclass(frozen=True)
class Wanted:
    """One role's articles: a par2 or archive's first segment, or an nfo's segments."""

    role: str
    message_ids: tuple[str, ...]
    bytes: int  # the catalog's size of those segments (0: unknown)
    name: str

    def fetch_cap(self) -> int:
        """The most bytes one body may have: the catalog's size of the role's articles
        (their sizes count headers too, so a body is smaller) and some slack."""
        if self.bytes <= 0:
            return yenc.MAX_BODY
        return min(yenc.MAX_BODY, self.bytes + FETCH_SLACK)

    def nfo_cap(self) -> int:
        """The most nfo bytes joined: the parser reads no more, nor does the catalog have them."""
        return min(nfo.MAX_NFO, self.bytes) if self.bytes > 0 else nfo.MAX_NFO


@dataclass
class InspectLease:
    id: int
    epoch: int
    release: int
    group: str
    articles: tuple[Wanted, ...]
    lost: bool = False

    @property
    def path(self) -> str:
        return f"/inspections/{self.id}"

    @classmethod
    def from_json(cls, data: Any) -> InspectLease:
        """The lease of a lease call's answer; BadLease for one this agent cannot read
        (the fields it needs to release it are checked first)."""
        if not isinstance(data, dict):
            raise BadLease("the lease is not an object")
        lease_id, epoch = data.get("id"), data.get("epoch")
        if not (_whole(lease_id) and _whole(epoch)):
            raise BadLease("the lease has no whole-number id and epoch")
        lease = cls(lease_id, epoch, 0, "", ())
        release, group, articles = data.get("release"), data.get("group"), data.get("articles")
        if not _whole(release) or not isinstance(group, str):
            raise BadLease(f"inspection {lease_id} has no release or group", lease)
        if not isinstance(articles, list) or not 1 <= len(articles) <= MAX_ARTICLES:
            raise BadLease(f"inspection {lease_id} names 1 to {MAX_ARTICLES} articles", lease)
        lease.release, lease.group = release, group
        try:
            lease.articles = tuple(_wanted(lease_id, item) for item in articles)
        except BadLease as exc:
            raise BadLease(str(exc), lease) from None
        if len({wanted.role for wanted in lease.articles}) != len(lease.articles):
            raise BadLease(f"inspection {lease_id} names a role twice", lease)
        return lease


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _wanted(lease_id: int, item: Any) -> Wanted:
    if not isinstance(item, dict):
        raise BadLease(f"inspection {lease_id}: an article is not an object")
    role, ids = item.get("role"), item.get("message_ids")
    size, name = item.get("bytes", 0), item.get("name", "")
    if role not in inspection.ROLES:
        raise BadLease(f"inspection {lease_id}: the role {str(role)[:40]!r} is unknown")
    limit = MAX_NFO_SEGMENTS if role == "nfo" else 1
    if (
        not isinstance(ids, list)
        or not 1 <= len(ids) <= limit
        or not all(isinstance(one, str) for one in ids)
    ):
        raise BadLease(f"inspection {lease_id}: the {role} names 1 to {limit} message-ids")
    return Wanted(role, tuple(ids), size if _whole(size) else 0, str(name)[:1024])


Fetch = Callable[[str, int], bytes]

# What a lease call gave: the leases handed out (held, newest first), the answer when
# nothing was handed out (to idle on), or None (nothing to wait for: ask again).
Taken = list[InspectLease] | dict[str, Any] | None


def build_report(lease: InspectLease, fetch: Fetch, stats: Stats | None = None) -> dict[str, Any]:
    """The report body for `lease`: each role's articles fetched and inspected.

    `fetch(message_id, max_bytes)` returns a body (dot-stuffing undone) or raises
    ArticleMissing (which lands in ``missing``); anything else it raises (the news
    server failed, the lease was lost) goes to the caller. Parsing never raises for
    any bytes.
    """
    return fetch_report(lease, fetch, stats).report()


@dataclass
class PendingReport:
    """An inspection's bodies fetched, not yet parsed.

    ``report()`` parses them (on the reporter thread in ``--mode inspect``, while
    the worker fetches the next inspection's bodies) and gives the report body.
    The nfo's segments are decoded and joined as they are fetched (they are
    fetched only as far as they are joined): its text is here, to parse.
    """

    epoch: int
    parts: list[tuple[str, bytes] | JoinedNfo]  # in the lease's order
    missing: list[dict[str, str]]
    stats: Stats | None = None
    stuffed: bool = False  # the bodies are as on the wire

    def report(self) -> dict[str, Any]:
        started = time.perf_counter()
        results = []
        for part in self.parts:
            if isinstance(part, tuple):
                result = inspect_article(*part, stuffed=self.stuffed)
            else:
                result = part.parse()
            results.append(result.to_json())
        if self.stats is not None:
            self.stats.add(inspect_seconds=time.perf_counter() - started)
        return {"epoch": self.epoch, "results": results, "missing": self.missing}


def fetch_report(
    lease: InspectLease, fetch: Fetch, stats: Stats | None = None, *, stuffed: bool = False
) -> PendingReport:
    """Each role's articles fetched (as ``build_report``; as on the wire, dot-stuffed,
    when `stuffed`), the nfo's joined, the bodies kept for ``PendingReport.report``
    to parse."""
    pending = PendingReport(lease.epoch, [], [], stats, stuffed)
    for wanted in lease.articles:
        if wanted.role == "nfo":
            joined = _join_nfo(wanted, fetch, pending.missing, stats, stuffed)
            if joined is not None:
                pending.parts.append(joined)
            continue
        (message_id,) = wanted.message_ids  # one first segment (InspectLease checks it)
        try:
            body = fetch(message_id, wanted.fetch_cap())
        except ArticleMissing as exc:
            pending.missing.append(_missing(wanted, message_id, exc))
            continue
        pending.parts.append((wanted.role, body))
    return pending


def _missing(wanted: Wanted, message_id: str, exc: ArticleMissing) -> dict[str, str]:
    return {"role": wanted.role, "message_id": message_id, "error": str(exc)[:300]}


def _join_nfo(
    wanted: Wanted,
    fetch: Fetch,
    missing: list[dict[str, str]],
    stats: Stats | None,
    stuffed: bool,
) -> JoinedNfo | None:
    """The nfo's segments fetched as ``join_nfo`` joins them, and what it joined (None
    when not even the first could be had)."""
    cap = wanted.fetch_cap()
    fetched = 0
    waited = 0.0  # seconds in fetch, which inspect_seconds leaves out

    def bodies() -> Iterator[bytes]:
        nonlocal fetched, waited
        for message_id in wanted.message_ids:
            started = time.perf_counter()
            try:
                body = fetch(message_id, cap)
            except ArticleMissing as exc:
                missing.append(_missing(wanted, message_id, exc))
                return  # an nfo's segments after a gap would not join
            finally:
                waited += time.perf_counter() - started
            fetched += 1
            yield body

    started = time.perf_counter()
    result = join_nfo(bodies(), wanted.nfo_cap(), stuffed=stuffed)
    if stats is not None:
        stats.add(inspect_seconds=max(0.0, time.perf_counter() - started - waited))
    return result if fetched else None


def already_done(answer: dict[str, Any]) -> bool:
    """A 409's answer saying the inspection is done (its report was applied before)."""
    return answer.get("error") == "lease_lost" and " is done, not leased" in str(
        answer.get("detail")
    )


class Inspector:
    """Leases, fetches, inspects and reports one inspection at a time, for a worker."""

    def __init__(self, worker: Worker, articles: ArticleSource) -> None:
        self.worker, self.articles = worker, articles
        self.coordinator: Coordinator = worker.coordinator
        self.control, self.stats = worker.control, worker.stats
        self.takes_reports = True  # POST /inspections/reports, until the coordinator has none

    def take_one(self, heartbeat: Heartbeat, reporter: Reporter) -> dict[str, Any] | None:
        """Lease one inspection and see it through; the lease call's answer when
        nothing was handed out (for the caller to idle on), else None."""
        taken = self.lease(heartbeat)
        if isinstance(taken, list):
            for lease in taken:  # one: it asked for one (``lease`` gives back any more)
                self.see_through(lease, heartbeat, reporter)
            return None
        return taken

    def lease(self, heartbeat: Heartbeat, *, ahead: bool = False, count: int = 1) -> Taken:
        """Ask for up to `count` inspections: the leases handed out (at least one), held
        on the heartbeat from here on; the lease call's answer when nothing was handed
        out; None when there is nothing to wait for (leases this agent cannot read,
        given back; or, ``ahead``, the node at its cap of leases: the caller asks again
        once its current one is done).

        The call asks for a `count` (docs/api.md) only when it is over one, so a
        coordinator from before counts is asked as it always was; one that answers
        without ``leases`` hands out its ``lease`` alone.
        """
        body = {"count": count} if count > 1 else None
        try:
            offer = self.worker.call("/inspections/lease", body, busy_attempts=1 if ahead else None)
        except Busy:
            return None
        handed = offer.get("leases")
        if not isinstance(handed, list):  # a coordinator from before counts
            handed = [] if offer.get("lease") is None else [offer["lease"]]
        if not handed:
            return cast("dict[str, Any]", offer)
        leases = []
        for number, data in enumerate(handed):
            try:
                lease = InspectLease.from_json(data)
            except BadLease as exc:
                log.error("%s: a lease this agent cannot read, a bug: %s", self.worker.name, exc)
                if exc.lease is not None:
                    self.worker.release(exc.lease, str(exc), uncounted=False)
                continue
            if number >= count:  # more than asked for: a bug, the rest of the node's cap
                log.error("%s: inspection %s handed out past the %s asked for; given back",
                          self.worker.name, lease.id, count)  # fmt: skip
                self.worker.release(lease, None, uncounted=True)
                continue
            leases.append(lease)
        # Held only now: a release above that raised (the node stopping, the token
        # refused) leaves nothing on the heartbeat; the coordinator takes back those
        # leases once they go quiet.
        for lease in leases:
            heartbeat.hold(lease.path, lease.epoch, lease)
        return leases or None

    def see_through(self, lease: InspectLease, heartbeat: Heartbeat, reporter: Reporter) -> None:
        """Fetch, and hand the parsing and the report to the reporter thread."""
        self.hand_over(lease, self.inspect_held(lease, heartbeat), heartbeat, reporter)

    def inspect_held(self, lease: InspectLease, heartbeat: Heartbeat) -> PendingReport | None:
        """``inspect`` a held lease; its heartbeat ends here unless there is a report."""
        pending = None
        try:
            pending = self.inspect(lease)
        finally:
            if pending is None:
                heartbeat.drop(lease.path)
        return pending

    def hand_over(
        self,
        lease: InspectLease,
        pending: PendingReport | None,
        heartbeat: Heartbeat,
        reporter: Reporter,
    ) -> None:
        """The par2 and archive bodies are parsed and the report goes out on the
        reporter thread while the worker goes on; the lease's heartbeat lasts until
        the report is answered. The reporter's queue is bounded (Reporter), so the
        worker waits there rather than hold the bodies of more inspections."""
        if pending is not None:
            reporter.after(lease, lambda: self.finish(lease, pending, heartbeat))

    def inspect(self, lease: InspectLease) -> PendingReport | None:
        """Fetch (and inspect the nfo): the report to parse and send, or None when the
        lease was released with the error (or lost).

        A stop request (SIGTERM) lets this inspection finish and report: it is a
        few articles, each fetch bounded in bytes and seconds.
        """
        name = self.worker.name
        log.info(
            "%s: inspection %s of release %s (%s)",
            name,
            lease.id,
            lease.release,
            ", ".join(wanted.role for wanted in lease.articles),
        )
        try:
            pending = fetch_report(
                lease,
                lambda mid, cap: self.fetch(lease, mid, cap),
                self.stats,
                stuffed=self.articles.stuffed,
            )
        except LeaseLost as exc:
            log.warning("%s: inspection %s lost: %s", name, lease.id, exc.detail)
            return None
        except NewsServerFailure as exc:
            log.error("%s: inspection %s: %s", name, lease.id, exc)
            self.worker.release(lease, str(exc), uncounted=True)
            self.worker.pause_after_failure("the news server failed")
            return None
        except (Aborted, Unauthenticated):
            raise
        except Exception as exc:  # a bug in this agent: the node goes on with other work
            self.failed(lease, exc)
            return None
        if lease.lost:
            log.warning("%s: inspection %s lost while fetching", name, lease.id)
            return None
        return pending

    def failed(self, lease: InspectLease, exc: Exception) -> None:
        """A bug in this agent: the lease is released with it, counted."""
        log.exception("%s: inspection %s failed", self.worker.name, lease.id)
        self.worker.release(
            lease, f"the agent failed: {type(exc).__name__}: {exc}", uncounted=False
        )

    def fetch(self, lease: InspectLease, message_id: str, max_bytes: int) -> bytes:
        if self.control.abort.is_set():
            raise Aborted(f"inspection {lease.id} abandoned: the node is stopping now")
        if lease.lost:
            raise LeaseLost(409, "lease_lost", "the heartbeat was refused")
        started = time.perf_counter()
        try:
            body = self.articles.body(lease, message_id, max_bytes)
        finally:
            self.stats.add(news_seconds=time.perf_counter() - started)
        self.stats.add(articles=1, article_bytes=len(body))
        return body

    def hand_over_all(
        self,
        fetched: list[tuple[InspectLease, PendingReport]],
        heartbeat: Heartbeat,
        reporter: Reporter,
    ) -> None:
        """``hand_over`` for several inspections at once: their reports go out in one
        call (``finish_all``)."""
        if fetched:
            items = list(fetched)
            reporter.after(items[0][0], lambda: self.finish_all(items, heartbeat))

    def finish(self, lease: InspectLease, pending: PendingReport, heartbeat: Heartbeat) -> None:
        """On the reporter thread: parse the par2 and archive bodies, send the report
        (or release the lease with the coordinator's refusal, or with an error of
        this agent's own), then end the lease's heartbeat."""
        self.finish_all([(lease, pending)], heartbeat)

    def finish_all(
        self, fetched: list[tuple[InspectLease, PendingReport]], heartbeat: Heartbeat
    ) -> None:
        """``finish`` for several inspections: each one's bodies parsed, then their
        reports sent in one call (``POST /inspections/reports``) when there are several
        and the coordinator takes that call, else one call each. One that fails (a bug
        in this agent, a release refused) is logged and strands none of the others;
        every lease's heartbeat ends here."""
        reports = []
        for lease, pending in fetched:
            try:
                reports.append((lease, pending.report()))
            except Exception as exc:  # a bug in this agent: the node goes on
                self.each(lease, heartbeat, partial(self.failed, lease, exc))
        if len(reports) > 1 and self.takes_reports and self.send_together(reports, heartbeat):
            return
        for lease, report in reports:
            self.each(lease, heartbeat, partial(self.send_one, lease, report, heartbeat))

    def each(self, lease: InspectLease, heartbeat: Heartbeat, step: Callable[[], None]) -> None:
        """One inspection's step of a batch: a failure is logged, not raised, so the
        batch's other inspections go on; the lease's heartbeat ends."""
        try:
            step()
        except Unauthenticated as exc:  # the node stops (the others' calls fail the same)
            self.control.token_refused(exc.detail)
        except Aborted:  # stopping now, as asked: the lease's TTL takes it back
            pass
        except Exception:
            log.exception("%s: inspection %s could not be finished", self.worker.name, lease.id)
        finally:
            heartbeat.drop(lease.path)

    def send_together(
        self, reports: list[tuple[InspectLease, dict[str, Any]]], heartbeat: Heartbeat
    ) -> bool:
        """Several reports in one call; each answered as if sent alone (its release, or
        its refusal: lost, or released with the sentence). False when the call as a
        whole was refused (a coordinator from before that call: from here on, each
        report alone), or its answer cannot be read or matched to the reports by id:
        the caller sends each alone (one already applied then answers 409 saying it is
        done, counted as done: ``already_done``)."""
        body = {"reports": [{"id": lease.id, **report} for lease, report in reports]}
        try:
            answer = self.coordinator.post("/inspections/reports", body)
        except Unauthenticated as exc:
            self.control.token_refused(exc.detail)
        except Aborted:
            pass
        except CoordinatorError as exc:
            if exc.status in (404, 405):
                log.warning("the coordinator takes no reports together (%s); one at a time", exc)
                self.takes_reports = False
            else:
                log.error("%s: reports refused together (%s); sent one at a time", self.worker.name, exc)  # fmt: skip
            return False
        else:
            answers = answer.get("reports") if isinstance(answer, dict) else None
            if not isinstance(answers, list) or [
                item.get("id") if isinstance(item, dict) else None for item in answers
            ] != [lease.id for lease, _report in reports]:  # each answer by its report's id
                log.error("%s: an answer to reports sent together that this agent cannot read: %.200r",
                          self.worker.name, answer)  # fmt: skip
                return False
            for lease, _report in reports:
                heartbeat.drop(lease.path)
            for (lease, report), item in zip(reports, answers, strict=True):
                self.each(lease, heartbeat, partial(self.answered, lease, report, item))
            return True
        for lease, _report in reports:
            heartbeat.drop(lease.path)
        return True

    def answered(self, lease: InspectLease, report: dict[str, Any], item: dict[str, Any]) -> None:
        """One report's answer in a call of several, handled as ``send_one`` handles a
        call's."""
        status = item.get("status")
        detail = f"{status} {item.get('error')}: {str(item.get('detail'))[:500]}"
        if status == 200:
            self.done(lease, report, item)
        elif status == 409 and already_done(item):
            # Applied by an earlier call whose answer was lost (docs/api.md): done.
            log.info(
                "%s: inspection %s was already reported: %s", self.worker.name, lease.id, detail
            )
            self.stats.add(inspections=1)
        elif status in (404, 409):
            log.warning("%s: inspection %s lost: %s", self.worker.name, lease.id, detail)
        else:
            log.error("%s: inspection %s report refused: %s", self.worker.name, lease.id, detail)
            self.worker.release(lease, detail, uncounted=False)

    def send_one(self, lease: InspectLease, report: dict[str, Any], heartbeat: Heartbeat) -> None:
        name = self.worker.name
        try:
            answer = self.coordinator.post(f"{lease.path}/report", report)
        except (LeaseLost, NotFound) as exc:
            if already_done({"error": exc.code, "detail": exc.detail}):
                log.info("%s: inspection %s was already reported: %s", name, lease.id, exc.detail)
                self.stats.add(inspections=1)
            else:
                log.warning("%s: inspection %s lost: %s", name, lease.id, exc.detail)
            return
        except Unauthenticated as exc:
            self.control.token_refused(exc.detail)
            return
        except Aborted:
            return
        except CoordinatorError as exc:
            log.error("%s: inspection %s report refused: %s", name, lease.id, exc)
            self.worker.release(lease, str(exc), uncounted=False)
            return
        finally:
            heartbeat.drop(lease.path)
        self.done(lease, report, answer or {})

    def done(self, lease: InspectLease, report: dict[str, Any], answer: dict[str, Any]) -> None:
        self.stats.add(inspections=1)
        self.worker.backoff.reset()
        release = answer.get("release") or {}
        log.info(
            "%s: inspection %s done: release %s is %r%s (%s missing)",
            self.worker.name,
            lease.id,
            lease.release,
            release.get("name"),
            ", renamed" if release.get("renamed") else "",
            len(report["missing"]),
        )


class InspectWorker(Worker):
    """``--mode inspect``: one inspection after another until the node stops, the
    next ones leased while the current one is fetched and parsed (ahead).

    A lease call asks for LEASE_COUNT inspections at once; the worker holds what it
    hands out and inspects them in turn, and asks again, on a thread of its own, as
    it starts the last one it holds. The leases held ahead are heartbeated like the
    current one; the heartbeat marks one lost if the coordinator takes it back
    meanwhile, and it is then dropped unfetched when its turn comes. A stop (SIGTERM)
    finishes and reports the current inspection and gives the ones held ahead back,
    uncounted. A lease call ahead is answered before the current inspection is
    handed to the reporter thread (which parses its par2 and archive bodies and
    sends its report).
    """

    def __init__(self, name: str, coordinator: Coordinator, context: Context) -> None:
        super().__init__(name, coordinator, context)
        if context.articles is None:
            raise ValueError("an inspecting worker needs an article source")
        self.inspector = Inspector(self, context.articles)

    def loop(self, reporter: Reporter, heartbeat: Heartbeat) -> None:
        inspector = self.inspector
        ahead = ThreadPoolExecutor(1, thread_name_prefix=f"{self.name}-lease-ahead")
        pending: Future[Taken] | None = None
        held: deque[InspectLease] = deque()  # leased, not started, in their order
        fetched: list[tuple[InspectLease, PendingReport]] = []  # to report together
        refused_ahead = False  # the call ahead handed out nothing (the node at its cap)
        try:
            while not self.control.stop.is_set():
                if not held:
                    if refused_ahead:  # the reports in flight free leases: wait for them
                        self.wait_for_reporter(reporter)  # (not for Retry-After at the cap)
                        refused_ahead = False
                    taken = inspector.lease(heartbeat, count=LEASE_COUNT)
                    if not isinstance(taken, list):
                        if taken is not None and not self.idle(taken):
                            return
                        continue
                    held.extend(taken)
                current = held.popleft()
                last = not held
                if last:  # the last one held: ask for the next ones meanwhile
                    pending = ahead.submit(
                        inspector.lease, heartbeat, ahead=True, count=LEASE_COUNT
                    )
                report = inspector.inspect_held(current, heartbeat)
                if report is not None:
                    fetched.append((current, report))
                following, pending = pending, None
                taken = None
                try:
                    if following is not None:
                        taken = following.result()
                finally:
                    if last or len(fetched) >= REPORTS_AT_ONCE:
                        inspector.hand_over_all(fetched, heartbeat, reporter)
                        fetched = []
                refused_ahead = following is not None and taken is None
                if isinstance(taken, list):
                    held.extend(taken)
                elif isinstance(taken, dict):  # nothing handed out: idle, then ask again
                    if not self.idle(taken):
                        return
        finally:
            inspector.hand_over_all(fetched, heartbeat, reporter)  # a stop: the ones fetched
            if pending is not None:  # an error left the lease call ahead unanswered
                pending.cancel()
                try:
                    taken = pending.result()
                except Exception:  # the error that ended the loop is the one that counts
                    taken = None
                if isinstance(taken, list):
                    held.extend(taken)
            ahead.shutdown(wait=True)
            for lease in held:
                self.give_back(lease, heartbeat)

    def give_back(self, lease: InspectLease, heartbeat: Heartbeat) -> None:
        """Release a lease held ahead, unstarted (the node is stopping): uncounted,
        as no attempt was made. Not when aborting or failing: its TTL runs out."""
        heartbeat.drop(lease.path)
        if lease.lost or self.control.abort.is_set() or self.control.exit_code != EXIT_OK:
            return
        log.info("%s: inspection %s given back unstarted", self.name, lease.id)
        try:
            self.release(lease, None, uncounted=True)
        except (Aborted, CoordinatorError) as exc:
            log.warning(
                "%s: inspection %s not given back (%s); its TTL will", self.name, lease.id, exc
            )
