"""Content negotiation with the node's answer found first.

A node asks with `Accept: application/json`, `*/*` or no Accept at all, and
every protocol view's first renderer is JSON: DRF's negotiation (parsing the
header, ordering by precedence) picks that renderer and that media type, so
it is answered here without parsing. Anything else (another Accept, a
`?format=`, a format suffix) goes to DRF's negotiation as before.
"""

from __future__ import annotations

from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation

JSON = "application/json"
_PLAIN = frozenset({"", "*/*", JSON})


class NodeFirstNegotiation(DefaultContentNegotiation):
    def select_renderer(
        self, request: Any, renderers: Any, format_suffix: str | None = None
    ) -> Any:
        if (
            format_suffix is None
            and renderers
            and renderers[0].media_type == JSON
            and request.META.get("HTTP_ACCEPT", "") in _PLAIN
            and self.settings.URL_FORMAT_OVERRIDE not in request.query_params
        ):
            return renderers[0], JSON
        return super().select_renderer(request, renderers, format_suffix)
