"""The newznab API's HTTP edge: `GET /api?t=…` and `GET /rss`.

Plain Django views, not DRF: the answers are the spec's RSS, JSON and error
documents, not the node API's JSON. Every NewznabError becomes the spec's
error element here and nowhere else (HTTP 200, as clients expect, except a
rate limit: 429 with Retry-After).
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from . import services
from .errors import (
    BadApiKey,
    FunctionNotAvailable,
    MissingParameter,
    NewznabError,
    NoSuchFunction,
    RateLimited,
)
from .feed import (
    PLAIN_XML_CONTENT_TYPE,
    Capabilities,
    caps_json,
    error_json,
    render_caps,
    render_error,
)
from .services import ApiCaller

Handler = Callable[[HttpRequest, ApiCaller, bool], HttpResponse]

# Optional functions of the spec this server does not offer (203, not 202).
NOT_AVAILABLE = frozenset(
    {"music", "book", "register", "cart-add", "cart-del", "comments", "comments-add", "user", "nfo"}
)


def wants_json(request: HttpRequest) -> bool:
    return request.GET.get("o", "").strip().lower() == "json"


def presented_key(request: HttpRequest) -> str:
    return request.GET.get("apikey", "") or request.headers.get("X-Api-Key", "")


def caller_of(request: HttpRequest) -> ApiCaller:
    key = presented_key(request)
    if not key:
        raise BadApiKey("Incorrect user credentials")
    return services.authenticate(key)


def xml_response(document: bytes, content_type: str = PLAIN_XML_CONTENT_TYPE) -> HttpResponse:
    return HttpResponse(document, content_type=content_type)


def error_response(error: NewznabError, as_json: bool) -> HttpResponse:
    if as_json:
        response: HttpResponse = JsonResponse(error_json(error.code, error.detail))
    else:
        response = xml_response(render_error(error.code, error.detail))
    if isinstance(error, RateLimited):
        response.status_code = 429
        response["Retry-After"] = str(error.retry_after)
    return response


def capabilities(request: HttpRequest) -> Capabilities:
    return Capabilities(
        title=settings.NEWZNAB_TITLE,
        url=request.build_absolute_uri("/"),
        default_limit=settings.NEWZNAB_DEFAULT_LIMIT,
        max_limit=settings.NEWZNAB_MAX_LIMIT,
        searching=(
            ("search", True, "q,group"),
            ("tv-search", True, "q,season,ep"),
            ("movie-search", True, "q,imdbid"),
            ("audio-search", False, ""),
            ("book-search", False, ""),
        ),
    )


def caps(request: HttpRequest, as_json: bool) -> HttpResponse:
    if as_json:
        return JsonResponse(caps_json(capabilities(request)))
    return xml_response(render_caps(capabilities(request)))


# t= functions that need a key; filled by the search module.
FUNCTIONS: dict[str, Handler] = {}


def dispatch(request: HttpRequest, as_json: bool) -> HttpResponse:
    function = request.GET.get("t", "").strip().lower()
    if not function:
        raise MissingParameter("Missing parameter (t)")
    if function == "caps":
        return caps(request, as_json)
    if function in NOT_AVAILABLE:
        raise FunctionNotAvailable(f"Function not available ({function})")
    handler = FUNCTIONS.get(function)
    if handler is None:
        raise NoSuchFunction(f"No such function ({function})")
    return handler(request, caller_of(request), as_json)


@require_GET
def api_view(request: HttpRequest) -> HttpResponse:
    as_json = wants_json(request)
    try:
        response = dispatch(request, as_json)
    except NewznabError as error:
        return error_response(error, as_json)
    response["Cache-Control"] = "no-store"
    return response
