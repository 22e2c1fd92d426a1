"""The lean path of a node's call: the browser-session middleware passes it by.

A call under /api/ that carries `Authorization: Bearer sn_…` (a node token's
form, `core.api.bodies.looks_like_node_token`) is authenticated by that token
alone: DRF's `NodeTokenAuthentication` answers it or refuses it with a 401, and
never falls back to a session, even on the reads that also take a staff login
(catalog/api.py, console/api.py). So the session, the CSRF cookie (a browser
cannot send that header across sites; the view's own CSRF check still runs),
the lazy session user and the messages have nothing to do for it, and these
subclasses of Django's middleware let it pass without loading them.
Every other request (the admin, the console, a staff read, a call without a
token) goes through them as before.

Measured in docs/performance.md, "The coordinator's cost per call".
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.middleware import AuthenticationMiddleware as _Authentication
from django.contrib.messages.middleware import MessageMiddleware as _Messages
from django.contrib.sessions.middleware import SessionMiddleware as _Sessions
from django.http import HttpRequest
from django.middleware.csrf import CsrfViewMiddleware as _Csrf
from django.utils.deprecation import MiddlewareMixin

from core.api.bodies import API_PREFIX, looks_like_node_token


def is_node_call(request: HttpRequest) -> bool:
    """A call under /api/ with a bearer header of a node token's form (kept on the request).

    The path is `path_info`, the one URL resolution and the body rules (core/api/bodies.py)
    read: `path` also holds the SCRIPT_NAME a proxy mounts the site under, and a mount
    named `/api` would otherwise let `/admin/` pass with no session or user."""
    known = request.__dict__.get("_node_call")
    if known is None:
        known = request.path_info.startswith(API_PREFIX) and looks_like_node_token(
            request.META.get("HTTP_AUTHORIZATION", "")
        )
        request._node_call = known  # type: ignore[attr-defined]
    return bool(known)


class _NodeCallsPass(MiddlewareMixin):
    """Mixed in before one of Django's middleware: a node's call goes straight on."""

    def __call__(self, request: HttpRequest) -> Any:
        if is_node_call(request):
            return self.get_response(request)
        return super().__call__(request)


class SessionMiddleware(_NodeCallsPass, _Sessions):
    pass


class CsrfViewMiddleware(_NodeCallsPass, _Csrf):
    """Its cookie's reading and setting pass a node's call by; its check of the view
    (process_view) is Django's for every call: a CSRF-exempt view (every DRF view)
    returns at once, any other still needs the cookie and the token."""


class AuthenticationMiddleware(_NodeCallsPass, _Authentication):
    pass


class MessageMiddleware(_NodeCallsPass, _Messages):
    pass
