"""The node's HTTP client for the coordinator: JSON, a Bearer token, retries.

Standard library only. A call is retried as it is while the coordinator is
unreachable or answers 429/502/503/504 (after its Retry-After); other errors become typed exceptions the
workers act on (docs/seed-node.md, "Retries").
"""

from __future__ import annotations

import http.client
import json
import logging
import random
import ssl
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

log = logging.getLogger(__name__)

# 429: a lease call over the rate or the per-node cap; Retry-After says when to call again.
RETRY_STATUSES = frozenset({429, 502, 503, 504})
_BODY_LIMIT = 64 * 1024  # of an error body we read for its detail


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


class Coordinator:
    """Calls ``/api/v1/...`` of one coordinator; safe to share between threads."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        max_backoff: float = 60.0,
        abort: threading.Event | None = None,
    ) -> None:
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"The coordinator URL must be http(s)://host[:port], not {base_url!r}."
            )
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/") + "/api/v1"
        self._token = token
        self.timeout = timeout
        self.max_backoff = max_backoff
        # Set on a second signal: a call being retried gives up instead of waiting on.
        self.abort = abort or threading.Event()
        self._ssl = ssl.create_default_context() if self._https else None

    def __repr__(self) -> str:  # never shows the token
        return f"<Coordinator {self.base_url}>"

    # --- JSON calls -------------------------------------------------------------

    def post(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """POST JSON; returns the decoded answer (None for 204)."""
        payload = json.dumps(body or {}, separators=(",", ":")).encode("utf-8")
        backoff = Backoff(cap=self.max_backoff)
        while True:
            response = self._call("POST", path, payload, {"Content-Type": "application/json"})
            try:
                return _read_json(response)
            except (OSError, http.client.HTTPException) as exc:
                # The answer broke off: the call may or may not have taken effect.
                # Calling again is safe (batches, heartbeats and finish are
                # idempotent; a lease whose answer was lost runs out its TTL).
                delay = backoff.next_delay()
                log.warning(
                    "POST %s: the answer broke off (%r); calling again in %.1fs", path, exc, delay
                )
            if self.abort.wait(delay):
                raise Aborted(f"POST {path} abandoned: the node is stopping now")

    # --- streamed calls ---------------------------------------------------------

    def open_stream(
        self, path: str, query: Mapping[str, Any] | None = None
    ) -> http.client.HTTPResponse:
        """GET whose body the caller reads (and closes) itself."""
        return self._call("GET", _with_query(path, query))

    def put_file(
        self, path: str, file_path: Path, content_type: str, query: Mapping[str, Any] | None = None
    ) -> None:
        """PUT a file as the body, streamed from disk (opened again on each retry)."""
        self._call(
            "PUT",
            _with_query(path, query),
            file_path,
            {"Content-Type": content_type, "Content-Length": str(file_path.stat().st_size)},
        ).close()

    # --- the retry loop ---------------------------------------------------------

    def _call(
        self,
        method: str,
        path: str,
        body: bytes | Path | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> http.client.HTTPResponse:
        backoff = Backoff(cap=self.max_backoff)
        while True:
            if self.abort.is_set():
                raise Aborted(f"{method} {path} abandoned: the node is stopping now")
            try:
                response = self._send(method, path, body, headers or {})
            except (OSError, http.client.HTTPException) as exc:
                delay = backoff.next_delay()
                log.warning(
                    "%s %s: coordinator unreachable (%s); retrying in %.1fs",
                    method,
                    path,
                    exc,
                    delay,
                )
            else:
                if response.status < 400:
                    return response
                if response.status not in RETRY_STATUSES:
                    raise _error_for(response)
                delay = _retry_after(response) or backoff.next_delay()
                response.read(_BODY_LIMIT)
                response.close()
                log.warning(
                    "%s %s: coordinator unavailable (%s); retrying in %.1fs",
                    method,
                    path,
                    response.status,
                    delay,
                )
            if self.abort.wait(delay):
                raise Aborted(f"{method} {path} abandoned: the node is stopping now")

    def _send(
        self, method: str, path: str, body: bytes | Path | None, headers: Mapping[str, str]
    ) -> http.client.HTTPResponse:
        connection: http.client.HTTPConnection
        if self._https:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.timeout, context=self._ssl
            )
        else:
            connection = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        all_headers = {
            "Authorization": f"Bearer {self._token}",
            "Accept": "application/json",
            "User-Agent": "seed-node/1",
            **headers,
        }
        try:
            if isinstance(body, Path):
                with body.open("rb") as stream:
                    connection.request(method, self._prefix + path, stream, all_headers)
            else:
                connection.request(method, self._prefix + path, body, all_headers)
            # The response keeps the socket; closing the response closes it.
            return connection.getresponse()
        except BaseException:
            connection.close()
            raise


def _with_query(path: str, query: Mapping[str, Any] | None) -> str:
    return f"{path}?{urlencode(query)}" if query else path


def _read_json(response: http.client.HTTPResponse) -> Any:
    with response:
        data = response.read()
    if response.status == 204 or not data:
        return None
    return json.loads(data)


def _retry_after(response: http.client.HTTPResponse) -> float | None:
    value = response.getheader("Retry-After")
    try:
        return min(float(value), 300.0) if value else None
    except ValueError:
        return None


def _error_for(response: http.client.HTTPResponse) -> CoordinatorError:
    with response:
        raw = response.read(_BODY_LIMIT)
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
    }.get(status, Rejected)
    return kind(status, code or http.client.responses.get(status, "error"), detail)
