"""The node protocol's views: DRF's dispatch, with a node's own call taken short.

A node's call (`core.api.node_calls.is_node_call`: a node token's bearer header
under /api/) that accepts JSON (`Accept` of `*/*`, `application/json` or none,
no `?format=`) to a view that renders JSON alone and has no throttles or
versioning is dispatched here by the steps DRF's `APIView.dispatch` takes for
it, and no others:

- DRF's `Request` (so `request.data` is parsed by the view's parsers with their
  body limits, and `request.user` by its authenticators: the token through the
  token cache), built with the view's parser and authenticator instances kept
  once per class (they hold no state) instead of made per call;
- `check_permissions` and `handle_exception` as DRF's (the permissions are made
  per call: one may keep a per-request message), so every refusal is the same
  JSON body and status from the one exception handler (core/api/errors.py);
- the answer rendered by the view's JSON renderer straight into its `Response`,
  with the `Allow` header DRF adds (worked out once per class), instead of
  DRF's renderer context and Django's template-response rendering.

What it leaves out does nothing for such a call: content negotiation (its
answer is known), versioning and throttling (none configured: a view with
either takes DRF's path), the format suffix, the renderer context. Every other
request (a staff read, an OPTIONS, another Accept, a call without a token)
goes through DRF's dispatch unchanged. Measured in docs/performance.md, "The
coordinator's cost per call".
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.http import HttpRequest, HttpResponseBase
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.negotiation import JSON, plain_accept
from core.api.node_calls import is_node_call


class NodeView(APIView):
    """The base of the node protocol's views (a DRF APIView: schema, OPTIONS and
    every other caller as before)."""

    # Per class, made on its first node call: (parsers, authenticators, renderer, Allow).
    _node_kit: ClassVar[tuple[list[Any], list[Any], Any, str] | None] = None

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        handler = self._node_handler(request, kwargs)
        if handler is None:
            return super().dispatch(request, *args, **kwargs)
        parsers, authenticators, renderer, allow = self._kit()
        self.args, self.kwargs = args, kwargs
        self.format_kwarg = None
        self.headers = {"Allow": allow}
        call = Request(
            request,
            parsers=parsers,
            authenticators=authenticators,
            negotiator=self.get_content_negotiator(),
            parser_context={"view": self, "args": args, "kwargs": kwargs},
        )
        call.accepted_renderer, call.accepted_media_type = renderer, JSON
        call.version, call.versioning_scheme = None, None
        self.request = call
        try:
            call.user  # noqa: B018 - authenticates (DRF's perform_authentication)
            self.check_permissions(call)
            response = handler(call, *args, **kwargs)
        except Exception as exc:
            response = self.handle_exception(exc)
        if isinstance(response, Response) and not response.is_rendered:
            self._render(response, renderer, call)
        response["Allow"] = allow
        self.response = response
        return response

    def _node_handler(self, request: HttpRequest, kwargs: dict[str, Any]) -> Any:
        """The method's handler when this call may take the short path; else None."""
        if not is_node_call(request) or "format" in kwargs:
            return None
        method = (request.method or "").lower()
        if method == "options" or method not in self.http_method_names:
            return None
        handler = getattr(self, method, None)
        if handler is None:
            return None
        if (
            self.throttle_classes
            or self.versioning_class is not None
            or len(self.renderer_classes) != 1
            or self.renderer_classes[0] is not JSONRenderer
            or not plain_accept(request)
        ):
            return None
        return handler

    def _kit(self) -> tuple[list[Any], list[Any], Any, str]:
        """This class's parsers, authenticators, renderer and `Allow` header, made from
        its first call's view (set up by Django: a GET view also allows HEAD)."""
        cls = type(self)
        kit = cls.__dict__.get("_node_kit")
        if kit is None:
            kit = (
                self.get_parsers(),
                self.get_authenticators(),
                self.get_renderers()[0],
                ", ".join(self.allowed_methods),
            )
            cls._node_kit = kit
        return kit

    @staticmethod
    def _render(response: Response, renderer: Any, call: Request) -> None:
        """DRF's `Response.rendered_content` for the JSON renderer, without its context."""
        response.accepted_renderer = renderer
        response.accepted_media_type = JSON
        context = {"request": call, "response": response}
        response.renderer_context = context  # type: ignore[attr-defined]  # set as DRF's is
        content = renderer.render(response.data, JSON, context)
        if content:
            response["Content-Type"] = response.content_type or JSON
        else:
            del response["Content-Type"]
        response.content = content
