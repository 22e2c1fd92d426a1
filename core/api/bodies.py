"""What a request may send as its body, decided from its head before a byte of it is read.

A body is read only when its route takes one and its size is what the
caller may send (docs/security.md, "Request bodies"):

- GET, HEAD, OPTIONS, DELETE and TRACE take none (no route reads one).
- A request without credentials may send UNAUTHENTICATED_MAX_BODY_BYTES (the
  login form fits). Credentials are, from the head alone: under /api/ an
  `Authorization: Bearer sn_…` header of a node token's form, elsewhere a
  session cookie of a session key's form. No database is asked here.
- With them: API_MAX_BODY_BYTES, and SNAPSHOT_MAX_BYTES for the one PUT (a
  lane snapshot, streamed), which the views themselves enforce from
  Content-Length before reading. The real check comes before such a body is read:
  DRF authenticates the token before a view parses anything, and
  `SessionBodyGate` loads the session before the admin's CSRF check reads a
  form (one query, which the admin view makes anyway).

The worker's main loop applies `refusal` to each head it reads
(core/gunicorn_worker.py), so a refused request never takes a thread;
`BodyLimitMiddleware` applies it again under any other server.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.http.cookie import parse_cookie

from core.api.errors import error_response
from core.sessions import is_session_key
from core.tokens import TOKEN_PREFIX
from usenet.numbers import ascii_digits

API_PREFIX = "/api/"
NO_BODY_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "DELETE", "TRACE", "CONNECT"})
MAX_LENGTH_DIGITS = 19  # a Content-Length past 2**63 is not a body anyone sends
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


@dataclass(frozen=True)
class Head:
    """What the body rules read of a request head."""

    method: str
    path: str
    length: int | None = None  # Content-Length, None without one
    chunked: bool = False
    bad_length: bool = False  # a Content-Length that is not a number of bytes
    node_token: bool = False  # a bearer token of a node token's form
    session: bool = False  # a session cookie of a session key's form
    expects_continue: bool = False

    @property
    def api(self) -> bool:
        return self.path.startswith(API_PREFIX)

    @property
    def credentialed(self) -> bool:
        return self.node_token if self.api else self.session


@dataclass(frozen=True)
class Refusal:
    status: int
    code: str
    detail: str


def looks_like_node_token(authorization: str) -> bool:
    """`Bearer sn_…` with a token's characters and length (what authentication checks first)."""
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return (
        scheme.lower() == "bearer"
        and token.startswith(TOKEN_PREFIX)
        and len(TOKEN_PREFIX) < len(token) <= 200
        and set(token) <= _TOKEN_CHARS
    )


def has_session_cookie(cookie: str) -> bool:
    """A session cookie whose value has a session key's form (Django's: 8+ of a-z0-9)."""
    return is_session_key(parse_cookie(cookie).get(settings.SESSION_COOKIE_NAME, ""))


def parse_length(raw: str) -> int | None:
    """A Content-Length's value as a number; None when it is not one (or absurdly long)."""
    raw = raw.strip()
    if len(raw) > MAX_LENGTH_DIGITS or not ascii_digits(raw):
        return None
    return int(raw)


def head_from_bytes(data: bytes) -> Head | None:
    """The head (up to, not with, its blank line) as the rules read it; None when it is
    not a request head (gunicorn's parser then refuses it)."""
    lines = bytes(data).decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3:
        return None
    fields: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            return None
        fields.setdefault(name.strip().lower(), []).append(value.strip())
    return head_from_fields(parts[0], _target_path(parts[1]), fields)


def head_of_unfinished(data: bytes) -> Head:
    """What the request line of a head that never ended says (method and path), so
    that its answer comes in its kind (the API's JSON under /api/); GET / otherwise."""
    line = bytes(data[:8192]).partition(b"\r\n")[0].decode("latin-1")
    parts = line.split(" ")
    return Head(parts[0], _target_path(parts[1])) if len(parts) == 3 else Head("GET", "/")


def _target_path(target: str) -> str:
    if "://" in target:  # absolute form: http://host/path
        target = "/" + target.partition("://")[2].partition("/")[2]
    return target.partition("?")[0]


def head_from_fields(method: str, path: str, fields: Mapping[str, list[str]]) -> Head:
    lengths = set(fields.get("content-length", []))
    length = parse_length(next(iter(lengths))) if len(lengths) == 1 else None
    return Head(
        method=method,
        path=path,
        length=length,
        chunked=any("chunked" in v.lower() for v in fields.get("transfer-encoding", [])),
        bad_length=bool(lengths) and length is None,
        node_token=any(looks_like_node_token(v) for v in fields.get("authorization", [])),
        session=any(has_session_cookie(v) for v in fields.get("cookie", [])),
        expects_continue=any(v.lower() == "100-continue" for v in fields.get("expect", [])),
    )


def head_from_request(request: HttpRequest) -> Head:
    meta = request.META
    fields = {
        name: [meta[key]]
        for name, key in (
            ("content-length", "CONTENT_LENGTH"),
            ("transfer-encoding", "HTTP_TRANSFER_ENCODING"),
            ("authorization", "HTTP_AUTHORIZATION"),
            ("cookie", "HTTP_COOKIE"),
        )
        if meta.get(key)
    }
    return head_from_fields(request.method or "GET", request.path_info, fields)


def allowance(head: Head) -> int:
    """The most bytes of body this request may send, by its method and credentials."""
    if head.method in NO_BODY_METHODS:
        return 0
    if not head.credentialed:
        return int(settings.UNAUTHENTICATED_MAX_BODY_BYTES)
    if head.method == "PUT" and head.api:
        return int(settings.SNAPSHOT_MAX_BYTES)  # a lane snapshot, streamed to disk
    return int(settings.API_MAX_BODY_BYTES)


def refusal(head: Head) -> Refusal | None:
    """Why this request's body is not read (its answer), or None when it may be."""
    if head.bad_length:
        return Refusal(400, "invalid", "Content-Length must be one whole number of bytes.")
    limit = allowance(head)
    if limit == 0 and (head.chunked or (head.length or 0) > 0):
        return Refusal(
            413, "too_large", f"A {head.method} request takes no body; send it without one."
        )
    if not head.credentialed and (head.chunked or (head.length or 0) > limit):
        return _unauthenticated(head, limit)
    # Past API_MAX_BODY_BYTES or SNAPSHOT_MAX_BYTES the view answers 413 itself,
    # from Content-Length and before reading (the parser, the snapshot service).
    return None


def _unauthenticated(head: Head, limit: int) -> Refusal:
    if head.api:
        who, then = "a node token ('Authorization: Bearer sn_…')", "Send the node's token."
    else:
        who, then = "a login session", "Log in first (a session may have expired)."
    if head.chunked:
        return Refusal(
            411,
            "length_required",
            f"A request without {who} must send a Content-Length (at most {limit} bytes).",
        )
    return Refusal(
        413,
        "too_large",
        f"A request without {who} may send at most {limit} bytes of body; this one "
        f"declares {head.length}. {then}",
    )


def refusal_response(head: Head, refused: Refusal) -> HttpResponse:
    """The answer: the API's JSON under /api/, a plain sentence elsewhere (a person reads it)."""
    if head.api:
        return error_response(refused.status, refused.code, refused.detail)
    return HttpResponse(
        refused.detail + "\n", status=refused.status, content_type="text/plain; charset=utf-8"
    )


class BodyLimitMiddleware:
    """`refusal` for every request, before anything reads its body (under gunicorn the
    worker has answered these already; this holds under any other server)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        head = head_from_request(request)
        refused = refusal(head)
        if refused is not None:
            return refusal_response(head, refused)
        return self.get_response(request)


class SessionBodyGate:
    """Outside the API, a body over UNAUTHENTICATED_MAX_BODY_BYTES is read only for a
    session that is really logged in (after AuthenticationMiddleware, before the CSRF
    check reads the form): a forged session cookie gets its 413 unread."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path_info.startswith(API_PREFIX):
            return self.get_response(request)  # the API's bodies: BodyLimitMiddleware
        head = head_from_request(request)
        limit = int(settings.UNAUTHENTICATED_MAX_BODY_BYTES)
        large = head.chunked or (head.length or 0) > limit
        user: Any = getattr(request, "user", None)
        if large and not (user is not None and user.is_authenticated):
            return refusal_response(head, _unauthenticated(head, limit))
        return self.get_response(request)
