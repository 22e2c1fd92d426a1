"""JSON parsing with a body limit, so an oversized batch is a 413, not a crash."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from rest_framework.parsers import JSONParser

from usenet.numbers import NotANumber, whole_number

from .errors import Invalid, TooLarge


def content_length(meta: Mapping[str, Any]) -> int | None:
    """The request's Content-Length (None without one); Invalid when it is not a number
    in ASCII digits, TooLarge when it has more digits than any limit."""
    raw = meta.get("CONTENT_LENGTH") or ""
    if not raw:
        return None
    try:
        return whole_number(raw)
    except NotANumber as refused:
        if refused.above:  # a number past any limit (never built)
            raise TooLarge("The body's Content-Length is over any limit here.") from None
        raise Invalid("Content-Length must be a whole number of bytes.") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def body_limit(view: Any) -> int:
    """API_MAX_BODY_BYTES, or a view's own smaller cap (its `max_body_bytes`)."""
    limit = int(settings.API_MAX_BODY_BYTES)
    own = getattr(view, "max_body_bytes", None)
    return min(limit, own) if own is not None else limit


class LimitedJSONParser(JSONParser):
    """Reads at most `body_limit` bytes: a longer body is a 413, from Content-Length
    before anything is read when the client sends one."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: Any = None) -> Any:
        limit = body_limit((parser_context or {}).get("view"))
        request = (parser_context or {}).get("request")
        length = content_length(request.META) if request is not None else None
        if length is not None and length > limit:
            raise TooLarge(f"The body is {length} bytes; the limit is {limit} bytes.")
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise TooLarge(f"The body is over the limit of {limit} bytes.")
        if not raw.strip():
            return {}
        try:
            return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Invalid(f"The body is not valid JSON ({exc}). Send a JSON object.") from exc
        except RecursionError:
            raise Invalid("The body nests too deeply to parse. Send a JSON object.") from None
