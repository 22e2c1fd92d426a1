"""The newznab API's HTTP edge: `GET /api?t=…` and `GET /rss`.

Plain Django views, not DRF: the answers are the spec's RSS, JSON and error
documents, not the node API's JSON. Every NewznabError becomes the spec's
error element here and nowhere else (HTTP 200, as clients expect, except a
rate limit: 429 with Retry-After).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from email.utils import format_datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.http import require_GET

from catalog.nzb import CONTENT_TYPE as NZB_CONTENT_TYPE
from catalog.nzb import content_disposition
from core.api.errors import RETRY_AFTER_UNAVAILABLE
from core.database_faults import if_unavailable
from core.replicas import read_tolerating_lag
from usenet.numbers import NotANumber, ascii_digits, whole_number

from . import feed as rss
from . import guids, params, selectors, services
from .categories import display_name, expand, parent_of
from .errors import (
    DATABASE_UNAVAILABLE,
    BadApiKey,
    BadParameter,
    FunctionNotAvailable,
    MissingParameter,
    NewznabError,
    NoSuchFunction,
    RateLimited,
    Unavailable,
)
from .feed import (
    PLAIN_XML_CONTENT_TYPE,
    Capabilities,
    caps_json,
    error_json,
    render_caps,
    render_error,
)
from .search_params import movie_query, search_query, titled, tv_query
from .selectors import Fields, SearchPage, SearchQuery
from .services import ApiCaller

TV, MOVIES = 5000, 2000

Handler = Callable[[HttpRequest, ApiCaller, bool], HttpResponseBase]

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
    elif isinstance(error, Unavailable):
        response.status_code = 503
        response["Retry-After"] = RETRY_AFTER_UNAVAILABLE
    return response


def answer(build: Callable[[], HttpResponseBase], as_json: bool) -> HttpResponseBase:
    """The view's answer, or the error document a newznab or database error becomes."""
    try:
        response = build()
    except NewznabError as error:
        return error_response(error, as_json)
    except DatabaseError as exc:  # a restart or failover: error 900 with 503, never a 500
        if not if_unavailable(exc):
            raise
        return error_response(Unavailable(DATABASE_UNAVAILABLE), as_json)
    response["Cache-Control"] = "no-store"
    return response


def capabilities(request: HttpRequest) -> Capabilities:
    ids = selectors.ids_carried()
    return Capabilities(
        title=settings.NEWZNAB_TITLE,
        url=request.build_absolute_uri("/"),
        default_limit=settings.NEWZNAB_DEFAULT_LIMIT,
        max_limit=settings.NEWZNAB_MAX_LIMIT,
        searching=(
            ("search", True, "q,group"),
            # An id only when some release carries one (inspection reads them from
            # nfos): offering one no release has would cost Sonarr and Radarr a
            # request that cannot match before the title search.
            ("tv-search", True, "q,season,ep" + (",tvdbid" if ids.tvdb else "")),
            ("movie-search", True, "q" + (",imdbid" if ids.imdb else "")),
            ("audio-search", False, ""),
            ("book-search", False, ""),
        ),
    )


def caps(request: HttpRequest, as_json: bool) -> HttpResponse:
    if as_json:
        return JsonResponse(caps_json(capabilities(request)))
    return xml_response(render_caps(capabilities(request)))


# --- searches ---------------------------------------------------------------


def feed_response(
    request: HttpRequest,
    caller: ApiCaller,
    as_json: bool,
    page: SearchPage,
    *,
    extended: bool | None = None,
) -> HttpResponse:
    if extended is None:
        extended = params.flag(request.GET, "extended")
    feed = rss.Feed(
        title=settings.NEWZNAB_TITLE,
        link=request.build_absolute_uri("/api"),
        description=f"{settings.NEWZNAB_TITLE} releases",
        offset=page.offset,
        total=page.total,
        items=[feed_item(request, caller, row, extended) for row in page.releases],
    )
    if as_json:
        return JsonResponse(rss.feed_json(feed))
    return xml_response(rss.render_rss(feed), rss.XML_CONTENT_TYPE)


def feed_item(request: HttpRequest, caller: ApiCaller, row: Any, extended: bool) -> rss.FeedItem:
    key = presented_key(request)
    guid = guids.release_guid(selectors.installation(), row.id)
    get = request.build_absolute_uri("/api?" + urlencode({"t": "get", "id": guid, "apikey": key}))
    details = request.build_absolute_uri(
        "/api?" + urlencode({"t": "details", "id": guid, "apikey": key})
    )
    return rss.FeedItem(
        title=row.name,
        guid=guid,
        link=get,
        comments=details,
        published=row.posted,
        category=display_name(row.category),
        size=row.size,
        attrs=release_attrs(row, guid, extended),
    )


def completion(row: Any) -> str:
    """How much of the release the catalog has seen, in percent (a whole number, as
    clients read it): its segments present over expected, times its files seen over
    the count its subjects give (a file not seen at all has no segments to miss)."""
    if not row.segments_expected:
        return "0"
    share = min(1.0, row.segments_present / row.segments_expected)
    if row.files_expected:
        share *= min(1.0, row.files_seen / row.files_expected)
    return str(int(100 * share))


def release_attrs(row: Any, guid: str, extended: bool) -> list[tuple[str, str]]:
    attrs = [
        ("category", str(cat)) for cat in dict.fromkeys((parent_of(row.category), row.category))
    ]
    attrs.append(("size", str(row.size)))
    attrs.append(("guid", guid))
    attrs.append(("usenetdate", format_datetime(row.posted)))
    attrs.append(("completion", completion(row)))
    if row.passworded:  # shown only to password=1 (and details): the spec's 1, passworded
        attrs.append(("password", "1"))
    if not extended:
        return attrs
    attrs += [
        ("files", str(row.files_seen)),
        ("poster", row.poster),
        *(("group", name) for name in row.groups),
        ("grabs", str(row.grabs)),
    ]
    return attrs


def search(request: HttpRequest, caller: ApiCaller, as_json: bool) -> HttpResponse:
    query = titled(search_query(request))
    return feed_response(request, caller, as_json, searched(query))


# The id parameters clients send (Sonarr, Radarr, Prowlarr, NZBHydra2). Releases
# carry an IMDb and a TVDB id once inspection read them from the nfo; caps
# offers imdbid (movie-search) and tvdbid (tv-search) only when some release
# has one. The others no release carries.
ID_PARAMETERS = ("tvdbid", "rid", "tvmazeid", "imdbid", "tmdbid", "traktid", "doubanid")
IMDB_DIGITS = 8  # "tt" and 7 or 8 digits: the ids inspection records
TVDB_MAX = 2**31 - 1


@dataclass(frozen=True, slots=True)
class AskedIds:
    named: bool  # some id parameter was given
    imdb_id: str | None = None  # "tt0111161": one a release can carry
    tvdb_id: int | None = None


def asked_ids(request: HttpRequest) -> AskedIds:
    """The ids the request names. A malformed id is error 201; an IMDb id is read
    with or without "tt" and padded to 7 digits as IMDb writes it ("111161" is
    tt0111161); one no release can carry (too long) matches nothing."""
    named = False
    imdb_id = tvdb_id = None
    for name in ID_PARAMETERS:
        value = params.text(request.GET, name, max_length=20)
        if name == "imdbid":
            value = value.removeprefix("tt")
        if value and not ascii_digits(value):
            raise BadParameter(
                f"Incorrect parameter ({name}: digits"
                + (", with or without tt)" if name == "imdbid" else ")")
            )
        named = named or bool(value)
        if name == "imdbid" and value and len(value.lstrip("0")) <= IMDB_DIGITS:
            imdb_id = f"tt{whole_number(value):07d}"
        elif name == "tvdbid" and value:
            tvdb_id = _tvdb_id(value)
    return AskedIds(named, imdb_id, tvdb_id)


def _tvdb_id(digits: str) -> int | None:
    """The TVDB id `digits` (ASCII digits) write, or None when no release can carry it."""
    try:
        return whole_number(digits, low=1, high=TVDB_MAX)
    except NotANumber:
        return None


def empty_page(
    request: HttpRequest, caller: ApiCaller, as_json: bool, query: SearchQuery
) -> HttpResponse:
    return feed_response(request, caller, as_json, SearchPage(query.offset, 0))


def by_id(
    request: HttpRequest, caller: ApiCaller, as_json: bool, query: SearchQuery
) -> HttpResponse:
    """An id's releases (the season and episode asked still apply; q does not), or an
    empty page for an id no release can carry: the releases of the other parameters
    alone would be unrelated ones."""
    ids = asked_ids(request)
    if ids.imdb_id is None and ids.tvdb_id is None:
        return empty_page(request, caller, as_json, query)
    fields = replace(
        query.fields or Fields(()), titles=(), imdb_id=ids.imdb_id, tvdb_id=ids.tvdb_id
    )
    return feed_response(request, caller, as_json, searched(replace(query, fields=fields)))


def tvsearch(request: HttpRequest, caller: ApiCaller, as_json: bool) -> HttpResponse:
    query = tv_query(request, search_query(request, default_categories=[TV]))
    if asked_ids(request).named:
        return by_id(request, caller, as_json, query)
    return feed_response(request, caller, as_json, searched(query))


def movie(request: HttpRequest, caller: ApiCaller, as_json: bool) -> HttpResponse:
    query = movie_query(search_query(request, default_categories=[MOVIES]))
    if asked_ids(request).named:
        return by_id(request, caller, as_json, replace(query, fields=None))
    return feed_response(request, caller, as_json, searched(query))


def searched(query: SearchQuery) -> SearchPage:
    """A search tolerates a replica's bounded lag (core/replicas.py); the key's counters,
    details and NZBs are the primary's."""
    return read_tolerating_lag(lambda using: selectors.search(query, using=using))


def release_id_of(request: HttpRequest) -> int:
    return guids.release_id_of(params.required(request.GET, "id"), selectors.installation())


def details(request: HttpRequest, caller: ApiCaller, as_json: bool) -> HttpResponse:
    row = selectors.release(release_id_of(request))
    # Details always carry every attribute.
    return feed_response(request, caller, as_json, SearchPage(0, 1, [row]), extended=True)


def get(request: HttpRequest, caller: ApiCaller, as_json: bool) -> HttpResponseBase:
    release_id = release_id_of(request)
    chunks, name = selectors.release_nzb(release_id)
    services.count_grab(caller, release_id)
    response = StreamingHttpResponse(chunks, content_type=NZB_CONTENT_TYPE)
    response["Content-Disposition"] = content_disposition(name)
    return response


FUNCTIONS: dict[str, Handler] = {
    "search": search,
    "tvsearch": tvsearch,
    "tv": tvsearch,
    "movie": movie,
    "movies": movie,
    "details": details,
    "d": details,
    "get": get,
    "g": get,
}


def dispatch(request: HttpRequest, as_json: bool) -> HttpResponseBase:
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


def newznab_view(
    build: Callable[[HttpRequest, bool], HttpResponseBase],
) -> Callable[[HttpRequest], HttpResponseBase]:
    """A GET-only view answering in XML or JSON, its errors as newznab error codes."""

    @require_GET
    def view(request: HttpRequest) -> HttpResponseBase:
        as_json = wants_json(request)
        return answer(lambda: build(request, as_json), as_json)

    return view


api_view = newznab_view(dispatch)


def newest_feed(request: HttpRequest, as_json: bool) -> HttpResponse:
    """/rss: the newest releases; `t` is a category list here (0: all), `num` the count."""
    caller = caller_of(request)
    categories = [cat for cat in params.integer_list(request.GET, "t") if cat]
    limit = params.integer(request.GET, "num", settings.NEWZNAB_DEFAULT_LIMIT, low=1)
    assert limit is not None
    query = SearchQuery(
        categories=expand(categories) or None,
        limit=min(limit, settings.NEWZNAB_MAX_LIMIT),
        incomplete=params.flag(request.GET, "incomplete"),
        passworded=params.flag(request.GET, "password"),
    )
    page = read_tolerating_lag(lambda using: selectors.newest(query, using=using))
    return feed_response(request, caller, as_json, page, extended=True)


rss_view = newznab_view(newest_feed)
