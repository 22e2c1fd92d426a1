"""Clients that run beside the agents during a fault, and what every call of theirs got.

`Probe` calls a few API routes (and the newznab API and /readyz) over and
over with a short client timeout; `Troublemaker` plays the node that never
behaves: it sends batches, heartbeats and snapshots with stale epochs as the
agents' own nodes, and replays batches that change nothing, as the holder.
Both record each answer (status, `error`, `Retry-After`, how long it took),
so a test can say which answers were seen while a fault was on.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

import psycopg

from tests.support.fleet import Fleet

CLIENT_TIMEOUT = 8.0  # longer than the coordinator's DB_CONNECT_TIMEOUT (5 s)


@dataclass
class Call:
    at: float  # time.time() the call started
    who: str  # "probe", "stale", "replay"
    method: str
    path: str
    status: int  # 0: no answer (see `failure`)
    code: str = ""  # the JSON `error`
    retry_after: str = ""
    seconds: float = 0.0
    failure: str = ""  # a timeout or a dropped connection
    body: Any = None
    digest: str = ""  # sha256 of a body that is not JSON (a snapshot)


def call(
    base: str,
    method: str,
    path: str,
    *,
    who: str,
    token: str = "",
    body: Any = None,
    raw: bytes | None = None,
    timeout: float = CLIENT_TIMEOUT,
) -> Call:
    """One HTTP call; never raises (a failure is recorded in the Call)."""
    parts = urlsplit(base)
    headers = {"Connection": "close"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    elif raw is not None:
        headers["Content-Type"] = "application/gzip"
    started = time.time()
    record = Call(started, who, method, path, 0)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=timeout)
    try:
        conn.request(method, path, body=data, headers=headers)
        response = conn.getresponse()
        text = response.read()
        record.status = response.status
        record.retry_after = response.getheader("Retry-After") or ""
        if "json" in (response.getheader("Content-Type") or ""):
            record.body = json.loads(text) if text else None
            if isinstance(record.body, dict):
                record.code = str(record.body.get("error", ""))
        else:
            record.digest = hashlib.sha256(text).hexdigest()
    except (OSError, http.client.HTTPException) as exc:
        record.failure = f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()
        record.seconds = round(time.time() - started, 2)
    return record


class Recorder:
    """The calls of a client thread, and the thread's stop flag."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.stop = threading.Event()
        self.errors: list[str] = []  # a client's own crash, reported by the test

    def add(self, record: Call) -> Call:
        self.calls.append(record)
        return record

    def dump(self) -> list[dict[str, Any]]:
        return [asdict(c) for c in self.calls]


@contextmanager
def running(target: Any, recorder: Recorder, name: str) -> Iterator[Recorder]:
    """Run `target(recorder)` in a thread until the block ends (then stop and join it)."""

    def guarded() -> None:
        try:
            target(recorder)
        except Exception as exc:  # reported by the test, never silently lost
            recorder.errors.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=guarded, name=name, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        recorder.stop.set()
        thread.join(CLIENT_TIMEOUT * 4)


def token(fleet: Fleet, name: str) -> str:
    path = fleet.tokens.get(name) or fleet.issue_token(name)
    return path.read_text().strip()


# --- the probe -------------------------------------------------------------------

# (method, path, body, the status the route answers with the database up)
PROBES: list[tuple[str, str, Any, int]] = [
    ("POST", "/api/v1/ranges/999999/heartbeat", {"epoch": 1}, 404),
    ("GET", "/api/v1/files", None, 200),
    ("GET", "/readyz", None, 200),
    ("GET", "/api?t=search&q=raven&o=json&apikey=", None, 200),  # newznab, the key appended
    ("GET", "/rss?t=0&apikey=", None, 200),
    ("GET", "/metrics", None, 200),  # from loopback, no token
]


PROBE_RATE_LIMIT = 100_000  # newznab calls a minute


def probe(fleet: Fleet, every: float = 0.25) -> Any:
    """A client calling PROBES in turn, with the probe node's token, and an unknown token."""
    good = token(fleet, "probe")
    # The probe calls the newznab API a few times a second, well past the default
    # 120 a minute: its key has a limit of its own, or a fast run is rate-limited
    # (429) and the probe no longer sees the answers it checks.
    key = fleet.python(
        "from newznab.services import issue_api_key\n"
        f"print(issue_api_key('probe', rate_limit={PROBE_RATE_LIMIT})[1])\n"
    ).strip()

    def loop(recorder: Recorder) -> None:
        while not recorder.stop.is_set():
            for method, path, body, _ in PROBES:
                node = "" if path.startswith(("/metrics", "/api?", "/rss")) else good
                path = path + key if path.endswith("apikey=") else path
                recorder.add(call(fleet.url, method, path, who="probe", token=node, body=body))
            # An unknown token is looked up in the database too (authentication).
            unknown = "sn_" + "x" * 40
            recorder.add(
                call(fleet.url, "GET", "/api/v1/files", who="probe-bad-token", token=unknown)
            )
            recorder.stop.wait(every)

    return loop


# --- the troublemaker --------------------------------------------------------------

LEASED_RANGES = """
SELECT r.id, n.name, r.epoch, r.next_id, r.end_id FROM seed_range r
  JOIN seed_node n ON n.id = r.node_id WHERE r.status = 'leased'
"""
HELD_LANES = """
SELECT l.group_id, l.lane, n.name, l.epoch FROM group_lane l
  JOIN seed_node n ON n.id = l.node_id WHERE l.epoch >= 1
"""
# A file no post has: stored by a stale batch, it would show in the catalog.
INTRUDER = {
    "subject": '[1/1] - "troublemaker.bin" yEnc (1/1)',
    "poster": "troublemaker <t@example.invalid>",
    "date": 1700000000,
    "total": 1,
    "segments": [[1, 1, "<troublemaker@example.invalid>", 1000]],
}


def troublemaker(fleet: Fleet, every: float = 0.3, base: str | None = None) -> Any:
    """Stale epochs and replays, sent as the agents' nodes, all through the run.

    For a range an agent holds at epoch E: a batch at E-1 that would move the
    resume point past the range, add headers and store a file no post has
    (409 expected, nothing stored), a heartbeat at E-1 (409), and a replay at
    E of a batch that reports nothing new (200, nothing stored, the resume
    point unmoved; 409 once the lease ended). For a lane held at epoch E: a
    snapshot PUT at E-1 (409; the lane's snapshot stays). The rows are read
    from the database when it answers, and the last rows read are used when
    it does not (during an outage every call should be a 503). `base`: the
    coordinator's own URL when the agents call it through a fault proxy.
    """
    url = base or fleet.url
    tokens: dict[str, str] = {}
    known: dict[str, list[tuple[Any, ...]]] = {"ranges": [], "lanes": []}

    def as_node(name: str) -> str:
        if name not in tokens:
            tokens[name] = fleet.tokens[name].read_text().strip()
        return tokens[name]

    def loop(recorder: Recorder) -> None:
        while not recorder.stop.is_set():
            try:
                with psycopg.connect(**fleet.conninfo, connect_timeout=2) as conn:
                    known["ranges"] = conn.execute(LEASED_RANGES).fetchall()
                    known["lanes"] = conn.execute(HELD_LANES).fetchall()
            except psycopg.Error:
                pass  # the database is down: go on with what was read last
            for range_id, node, epoch, next_id, end_id in known["ranges"][:2]:
                if node not in fleet.tokens or epoch < 1:  # epoch 0 is valid, and stale
                    continue
                send_range_calls(recorder, url, as_node(node), range_id, epoch, next_id, end_id)
            for group_id, lane, node, epoch in known["lanes"][:1]:
                if node in fleet.tokens:
                    path = (
                        f"/api/v1/groups/{group_id}/lanes/{lane}/snapshot?epoch={epoch - 1}&next=1"
                    )
                    recorder.add(
                        call(
                            url,
                            "PUT",
                            path,
                            who="stale",
                            token=as_node(node),
                            raw=b"\x1f\x8b",
                        )
                    )
            recorder.stop.wait(every)

    return loop


def send_range_calls(
    recorder: Recorder,
    url: str,
    node_token: str,
    range_id: int,
    epoch: int,
    next_id: int,
    end_id: int,
) -> None:
    base = f"/api/v1/ranges/{range_id}"
    stale = {"epoch": epoch - 1, "next": end_id + 1, "headers": 5000, "files": [INTRUDER]}
    recorder.add(call(url, "POST", f"{base}/batch", who="stale", token=node_token, body=stale))
    recorder.add(
        call(
            url,
            "POST",
            f"{base}/heartbeat",
            who="stale",
            token=node_token,
            body={"epoch": epoch - 1},
        )
    )
    replay = {"epoch": epoch, "next": next_id, "headers": 0, "files": []}
    recorder.add(call(url, "POST", f"{base}/batch", who="replay", token=node_token, body=replay))


def assert_documented_answers(recorder: Recorder, *, dropped: bool = False) -> None:
    """Stale epochs got 409 `lease_lost` (or 503 while the database was down),
    replays 200 with nothing stored, 409 or 503; with `dropped`, a call may also
    have lost its connection (a coordinator worker killed under it)."""
    assert recorder.errors == []
    assert any(c.who == "stale" and c.status == 409 for c in recorder.calls), recorder.calls[:5]
    for c in recorder.calls:
        if dropped and c.status == 0:
            continue
        if c.who == "stale":
            assert (c.status, c.code) in {(409, "lease_lost"), (503, "unavailable")}, c
        else:
            assert c.status in {200, 409, 503}, c
            assert c.status != 200 or c.body["stored"] == 0, c
