"""The node's HTTP client for the coordinator: JSON, a Bearer token, retries.

Standard library only. A call is retried as it is while the coordinator is
unreachable or answers 429/502/503/504 (after its Retry-After); other errors become typed exceptions the
workers act on (docs/seed-node.md, "Retries"). Given several coordinator
URLs (hosts sharing one database), a call that finds its host unreachable or
answering 502/503/504 moves on to the next host at once, and backs off only
once every host has failed in a row (docs/several-hosts.md).

JSON calls go on a connection each thread keeps open to its host (HTTP/1.1
keep-alive), so a call costs no TCP connect and no new request to the
coordinator's workers; a kept connection the coordinator closed while it was
idle is called on again at once on a new one. Streams (GETs the caller reads,
PUTs of files) go on a connection of their own, closed with them.
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

log = logging.getLogger(__name__)

# 429: a lease call over the rate or the per-node cap; Retry-After says when to call again.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
# The host (or the proxy in front of it) is down or overloaded: another host may answer.
FAILOVER_STATUSES = frozenset({502, 503, 504})
_BODY_LIMIT = 64 * 1024  # of an error body we read for its detail
_STOP_POLL_SECONDS = 0.1  # a retry's wait with a `stop` of its own looks at the abort so often
# What a kept connection raises when the coordinator closed it while it was idle
# (its keep-alive ran out, or a worker restarted): most likely the request reached
# no worker; if it did (a worker killed mid-request), every call is safe to send
# again (see post). RemoteDisconnected is both a BadStatusLine and a ConnectionResetError;
# over TLS a server that drops an idle connection sends no close_notify, which reads
# as ssl.SSLEOFError.
_STALE = (
    http.client.BadStatusLine,
    BrokenPipeError,
    ConnectionResetError,
    ConnectionAbortedError,
    ssl.SSLEOFError,
)


class CoordinatorError(Exception):
    """The coordinator answered with an error; ``status`` and ``code`` say which."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail


class Unauthenticated(CoordinatorError):
    """401: the token is missing, unknown or disabled. The node stops."""


class LeaseLost(CoordinatorError):
    """409: the lease is another node's now, or our epoch is stale. Drop it."""


class NotFound(CoordinatorError):
    """404: unknown range or group (or no snapshot)."""


class StaleLink(NotFound):
    """404 or 5xx from object storage: the snapshot was replaced after its URL was
    signed, or the store failed (S3 answers 500 and 503 now and then): ask again."""


class Busy(CoordinatorError):
    """429 more times in a row than the call allows (``busy_attempts``): another
    upload of the lane's snapshot is streaming, or an inspection leased ahead would
    pass the node's cap. The caller goes on without it."""


class Unavailable(CoordinatorError):
    """502/503/504 more times in a row than the call allows (``unavailable_attempts``):
    the relay's news server is down. The caller gives its lease back."""


class Rejected(CoordinatorError):
    """400, 413 or another client error: our request was wrong, which is a bug."""


class Aborted(Exception):
    """The node was told to stop at once while a call was still being retried."""


class Backoff:
    """Exponential backoff with full jitter, capped; ``reset`` after a success."""

    def __init__(self, base: float = 0.5, cap: float = 60.0) -> None:
        self.base = base
        self.cap = cap
        self.failures = 0

    def next_delay(self) -> float:
        ceiling = min(self.cap, self.base * 2**self.failures)
        self.failures = min(self.failures + 1, 30)
        return random.uniform(ceiling / 2, ceiling)

    def reset(self) -> None:
        self.failures = 0


@dataclass(frozen=True)
class _Host:
    base_url: str
    https: bool
    host: str
    port: int | None
    prefix: str


class _Kept:
    """A thread's kept connection: to which host, and the answer on it not yet read."""

    def __init__(self, index: int, connection: http.client.HTTPConnection) -> None:
        self.index = index
        self.connection = connection
        self.answer: http.client.HTTPResponse | None = None
        self.close: Callable[[], Any] = lambda: None  # set by Coordinator._kept


def parse_coordinator_urls(urls: str | Sequence[str]) -> list[str]:
    """Coordinator URLs from a comma-separated string or a list of them (each may hold commas)."""
    items = [urls] if isinstance(urls, str) else list(urls)
    found = [part.strip() for item in items for part in item.split(",") if part.strip()]
    if not found:
        raise ValueError("give at least one coordinator URL")
    return found


def _host(base_url: str) -> _Host:
    parts = urlsplit(base_url.rstrip("/"))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"The coordinator URL must be http(s)://host[:port], not {base_url!r}.")
    return _Host(
        base_url.rstrip("/"),
        parts.scheme == "https",
        parts.hostname,
        parts.port,
        parts.path.rstrip("/") + "/api/v1",
    )


class Coordinator:
    """Calls ``/api/v1/...`` of a coordinator (one of several hosts); safe to share between threads."""

    def __init__(
        self,
        base_url: str | Sequence[str],
        token: str,
        *,
        timeout: float = 60.0,
        max_backoff: float = 60.0,
        abort: threading.Event | None = None,
    ) -> None:
        self._hosts = [_host(url) for url in parse_coordinator_urls(base_url)]
        self._current = 0
        self._hosts_lock = threading.Lock()
        self._token = token
        self.timeout = timeout
        self.max_backoff = max_backoff
        # Set on a second signal: a call being retried gives up instead of waiting on.
        self.abort = abort or threading.Event()
        # Batches go in the columnar form until the coordinator refuses it (one from
        # before that form reads File objects only): then as File objects from here on.
        self.takes_columns = True
        self._ssl = (
            ssl.create_default_context() if any(host.https for host in self._hosts) else None
        )
        self._local = threading.local()  # .kept: this thread's _Kept, or None
        self._open: set[http.client.HTTPConnection] = set()  # every thread's, for close()
        self._open_lock = threading.Lock()

    def close(self) -> None:
        """Close every thread's kept connection (the node is stopping); a later call
        connects again."""
        with self._open_lock:
            connections = list(self._open)
        for connection in connections:
            connection.close()

    @property
    def base_url(self) -> str:
        """The host calls go to now (the first given, until it fails)."""
        return self._hosts[self._current].base_url

    @property
    def base_urls(self) -> list[str]:
        return [host.base_url for host in self._hosts]

    def _fail_over(self, failed: int) -> int:
        """Move calls off host `failed` (unless another thread already did); the host to use."""
        with self._hosts_lock:
            if self._current == failed and len(self._hosts) > 1:
                self._current = (failed + 1) % len(self._hosts)
                log.warning(
                    "coordinator %s failed; calls go to %s now",
                    self._hosts[failed].base_url,
                    self._hosts[self._current].base_url,
                )
            return self._current

    def __repr__(self) -> str:  # never shows the token
        return f"<Coordinator {self.base_url}>"

    # --- JSON calls -------------------------------------------------------------

    def post(
        self,
        path: str,
        body: Mapping[str, Any] | None = None,
        busy_attempts: int | None = None,
        stop: threading.Event | None = None,
    ) -> Any:
        """POST JSON; returns the decoded answer (None for 204). ``busy_attempts``: after
        that many 429s in a row, raise Busy instead of waiting on (default: wait on).
        ``stop``: once set, a call being retried gives up (Aborted), as on the node's abort."""
        payload = json.dumps(body or {}, separators=(",", ":")).encode("utf-8")
        backoff = Backoff(cap=self.max_backoff)
        while True:
            response = self._call(
                "POST",
                path,
                payload,
                {"Content-Type": "application/json"},
                busy_attempts=busy_attempts,
                keep=True,
                stop=stop,
            )
            try:
                return _decode_json(response, self._drain(response))
            except (OSError, http.client.HTTPException) as exc:
                # The answer broke off: the call may or may not have taken effect.
                # Calling again is safe (batches, heartbeats and finish are
                # idempotent; a lease whose answer was lost runs out its TTL).
                delay = backoff.next_delay()
                log.warning(
                    "POST %s: the answer broke off (%r); calling again in %.1fs", path, exc, delay
                )
            if self._wait(delay, stop):
                raise Aborted(f"POST {path} abandoned: the node is stopping now")

    def _wait(self, delay: float, stop: threading.Event | None) -> bool:
        """Wait `delay` seconds before a call again; True (give up) as soon as the node
        aborts or `stop` is set."""
        if stop is None:
            return self.abort.wait(delay)
        deadline = time.monotonic() + delay
        while not (self.abort.is_set() or stop.is_set()):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            stop.wait(min(left, _STOP_POLL_SECONDS))
        return True

    # --- streamed calls ---------------------------------------------------------

    def open_stream(
        self,
        path: str,
        query: Mapping[str, Any] | None = None,
        *,
        unavailable_attempts: int | None = None,
    ) -> http.client.HTTPResponse:
        """GET whose body the caller reads (and closes) itself.

        ``unavailable_attempts``: after that many 502/503/504 answers in a row,
        raise Unavailable instead of trying again (the article relay)."""
        return self._call(
            "GET", _with_query(path, query), unavailable_attempts=unavailable_attempts
        )

    def open_redirect(self, response: http.client.HTTPResponse) -> http.client.HTTPResponse:
        """Follow a 307 to a presigned URL (object storage), without the token.

        A presigned URL carries its own signature; the bearer token must never
        reach the object store. Any other answer is returned as it is.
        """
        if response.status not in (302, 303, 307):
            return response
        location = response.getheader("Location") or ""
        self._drain(response, _BODY_LIMIT)
        parts = urlsplit(location)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Rejected(response.status, "redirect", f"not a download URL: {location[:200]!r}")
        connection: http.client.HTTPConnection
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(
                parts.hostname,
                parts.port,
                timeout=self.timeout,
                context=ssl.create_default_context(),
            )
        else:
            connection = http.client.HTTPConnection(
                parts.hostname, parts.port, timeout=self.timeout
            )
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        try:
            connection.request("GET", target, headers={"User-Agent": "seed-node/1"})
            download = connection.getresponse()
        except BaseException:
            connection.close()
            raise
        if download.status >= 400:
            download.read(_BODY_LIMIT)
            download.close()
            kind = StaleLink if download.status == 404 or download.status >= 500 else NotFound
            raise kind(download.status, "object_store", "the snapshot download failed")
        return download

    def open_followed(
        self, path: str, query: Mapping[str, Any] | None = None, attempts: int = 5
    ) -> tuple[http.client.HTTPMessage, http.client.HTTPResponse]:
        """GET that follows a redirect to object storage: the coordinator's headers
        and the stream. A URL whose object was replaced after it was signed, or
        that the store failed to serve (5xx), is asked for again (the coordinator
        then names the newest object)."""
        for attempt in range(1, attempts + 1):
            response = self.open_stream(path, query)
            headers = response.msg
            try:
                return headers, self.open_redirect(response)
            except StaleLink:
                if attempt == attempts:
                    raise
        raise AssertionError("unreachable")

    def put_file(
        self,
        path: str,
        file_path: Path,
        content_type: str,
        query: Mapping[str, Any] | None = None,
        busy_attempts: int | None = None,
    ) -> None:
        """PUT a file as the body, streamed from disk (opened again on each retry).

        ``busy_attempts``: after that many 429s in a row, raise Busy instead of
        trying again (a snapshot: the next one will do)."""
        self._call(
            "PUT",
            _with_query(path, query),
            file_path,
            {"Content-Type": content_type, "Content-Length": str(file_path.stat().st_size)},
            busy_attempts,
        ).close()

    # --- the retry loop ---------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        body: bytes | Path | None = None,
        headers: Mapping[str, str] | None = None,
        busy_attempts: int | None = None,
        unavailable_attempts: int | None = None,
        *,
        keep: bool = False,
        stop: threading.Event | None = None,
    ) -> http.client.HTTPResponse:
        """The first answer below 400 (the caller reads it; with ``keep``, through
        `_drain`, so that its connection serves the next call), after retries."""
        backoff = Backoff(cap=self.max_backoff)
        failed_in_row = 0  # hosts that failed this call since it last moved on
        busy = 0  # 429s in a row
        unavailable = 0  # 502/503/504 in a row
        while True:
            if self.abort.is_set() or (stop is not None and stop.is_set()):
                raise Aborted(f"{method} {path} abandoned: the node is stopping now")
            index = self._current
            host = self._hosts[index]
            try:
                response = self._send(index, method, path, body, headers or {}, keep=keep)
            except (OSError, http.client.HTTPException) as exc:
                failed_in_row += 1
                delay = self._delay_after_failure(index, failed_in_row, backoff, None)
                log.warning(
                    "%s %s: coordinator %s unreachable (%s); retrying in %.1fs",
                    method,
                    path,
                    host.base_url,
                    exc,
                    delay,
                )
            else:
                if response.status < 400:
                    return response
                raw = self._drain(response, _BODY_LIMIT)
                if response.status not in RETRY_STATUSES:
                    raise _error_for(response, raw)
                busy = busy + 1 if response.status == 429 else 0
                if busy_attempts is not None and busy >= busy_attempts:
                    raise _error_for(response, raw)
                unavailable = unavailable + 1 if response.status in FAILOVER_STATUSES else 0
                if unavailable_attempts is not None and unavailable >= unavailable_attempts:
                    raise _error_for(response, raw)
                retry_after = _retry_after(response)
                if response.status in FAILOVER_STATUSES:
                    failed_in_row += 1
                    delay = self._delay_after_failure(index, failed_in_row, backoff, retry_after)
                else:
                    delay = retry_after or backoff.next_delay()
                log.warning(
                    "%s %s: coordinator %s unavailable (%s); retrying in %.1fs",
                    method,
                    path,
                    host.base_url,
                    response.status,
                    delay,
                )
            if self._wait(delay, stop):
                raise Aborted(f"{method} {path} abandoned: the node is stopping now")

    def _delay_after_failure(
        self, index: int, failed_in_row: int, backoff: Backoff, retry_after: float | None
    ) -> float:
        """Seconds to wait after host `index` failed: none while another host is untried."""
        self._fail_over(index)
        if failed_in_row % len(self._hosts):
            return 0.0
        return retry_after or backoff.next_delay()

    def _send(
        self,
        index: int,
        method: str,
        path: str,
        body: bytes | Path | None,
        headers: Mapping[str, str],
        *,
        keep: bool,
    ) -> http.client.HTTPResponse:
        """One request to host `index`: on this thread's kept connection (``keep``)
        or on one of its own, which the response closes once read."""
        host = self._hosts[index]
        if not keep:
            connection = self._connect(host)
            try:
                return self._request(connection, host, method, path, body, headers)
            except BaseException:
                connection.close()
                raise
        while True:  # twice at most: the second time on a new connection
            kept = self._kept(index)
            reused = kept.connection.sock is not None  # else the request connects afresh
            try:
                kept.answer = self._request(kept.connection, host, method, path, body, headers)
                return kept.answer
            except _STALE as exc:
                self._drop_kept()
                if not reused:
                    raise
                # Closed while idle, most likely before the request reached a worker
                # (and every call is safe to send twice: see post). Call again at once
                # on a new connection: the host has not failed, so no backoff, no failover.
                log.debug(
                    "%s %s: the kept connection was closed (%r); calling again", method, path, exc
                )
            except BaseException:
                self._drop_kept()
                raise

    def _connect(self, host: _Host) -> http.client.HTTPConnection:
        if host.https:
            return http.client.HTTPSConnection(
                host.host, host.port, timeout=self.timeout, context=self._ssl
            )
        return http.client.HTTPConnection(host.host, host.port, timeout=self.timeout)

    def _request(
        self,
        connection: http.client.HTTPConnection,
        host: _Host,
        method: str,
        path: str,
        body: bytes | Path | None,
        headers: Mapping[str, str],
    ) -> http.client.HTTPResponse:
        all_headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/json",
            "User-Agent": "seed-node/1",
            **headers,
        }
        if isinstance(body, Path):
            with body.open("rb") as stream:
                connection.request(method, host.prefix + path, stream, all_headers)
        else:
            connection.request(method, host.prefix + path, body, all_headers)
        return connection.getresponse()

    # --- kept connections -------------------------------------------------------

    def _kept(self, index: int) -> _Kept:
        """This thread's kept connection to host `index`; a new one when it has none,
        when it has one to another host (calls failed over), or when the last answer
        on it was not read to its end (its rest would be read as the next answer)."""
        kept: _Kept | None = getattr(self._local, "kept", None)
        if kept is not None and (kept.index != index or kept.answer is not None):
            self._drop_kept()
            kept = None
        if kept is None:
            kept = self._local.kept = _Kept(index, self._connect(self._hosts[index]))
            with self._open_lock:
                self._open.add(kept.connection)
            # A thread that ends (or a client dropped) takes its kept connection
            # with it; the callback holds no reference to this client.
            kept.close = weakref.finalize(
                kept, _forget, self._open, self._open_lock, kept.connection
            )
        return kept

    def _drop_kept(self) -> None:
        kept: _Kept | None = getattr(self._local, "kept", None)
        self._local.kept = None
        if kept is not None:
            kept.close()

    def _drain(self, response: http.client.HTTPResponse, limit: int | None = None) -> bytes:
        """Read an answer (up to `limit` bytes) and close it. Its kept connection
        serves the next call only when the answer was read to its end."""
        try:
            return response.read() if limit is None else response.read(limit)
        finally:
            kept: _Kept | None = getattr(self._local, "kept", None)
            if kept is not None and kept.answer is response:
                if response.isclosed():  # http.client closes an answer read to its end
                    kept.answer = None
                else:
                    self._drop_kept()
            response.close()


def _forget(
    open_connections: set[http.client.HTTPConnection],
    lock: threading.Lock,
    connection: http.client.HTTPConnection,
) -> None:
    with lock:
        open_connections.discard(connection)
    connection.close()


def _with_query(path: str, query: Mapping[str, Any] | None) -> str:
    return f"{path}?{urlencode(query)}" if query else path


def _decode_json(response: http.client.HTTPResponse, data: bytes) -> Any:
    if response.status == 204 or not data:
        return None
    return json.loads(data)


def _retry_after(response: http.client.HTTPResponse) -> float | None:
    value = response.getheader("Retry-After")
    try:
        return min(float(value), 300.0) if value else None
    except ValueError:
        return None


def _error_for(response: http.client.HTTPResponse, raw: bytes) -> CoordinatorError:
    try:
        payload = json.loads(raw)
        code, detail = str(payload.get("error", "")), str(payload.get("detail", ""))
    except (ValueError, AttributeError):
        code, detail = "", raw[:500].decode("utf-8", "replace")
    status = response.status
    kind: type[CoordinatorError] = {
        401: Unauthenticated,
        404: NotFound,
        409: LeaseLost,
        429: Busy,
        502: Unavailable,
        503: Unavailable,
        504: Unavailable,
    }.get(status, Rejected)
    return kind(status, code or http.client.responses.get(status, "error"), detail)
