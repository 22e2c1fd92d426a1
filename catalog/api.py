"""HTTP edge of the catalog: file lists, one file, NZB documents.

Reads for nodes (token) and operators (staff session: the view permission
on files for /files, on releases for /releases, as the admin asks). Errors
are typed exceptions mapped to HTTP in `core.api.errors`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.authentication import SessionAuthentication
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from core.api.edge import ErrorOut, validated_query
from core.api.permissions import IsNodeOrStaff
from core.errors import checked_id
from core.replicas import read_tolerating_lag
from indexer.authentication import NodeTokenAuthentication

from . import selectors
from .nzb import CONTENT_TYPE, content_disposition
from .serializers import (
    FileDetailOut,
    FileListIn,
    FilePageOut,
    ReleaseDetailOut,
    ReleaseListIn,
    ReleasePageOut,
)

# What the catalog's reads need of a staff session: the admin's file and release pages'.
VIEW_FILES = ("catalog.view_catalogfile",)
VIEW_RELEASES = ("catalog.view_release",)

ERRORS = {
    400: OpenApiResponse(ErrorOut, description="invalid: a parameter is out of range"),
    401: OpenApiResponse(ErrorOut, description="unauthenticated"),
    403: OpenApiResponse(
        ErrorOut, description="forbidden: a staff login without the view permission"
    ),
    404: OpenApiResponse(ErrorOut, description="not_found: unknown file or group"),
    503: OpenApiResponse(ErrorOut, description="unavailable: retry with backoff"),
}


class NzbRenderer(BaseRenderer):
    media_type = CONTENT_TYPE
    format = "nzb"
    charset = None

    def render(self, data: Any, accepted_media_type: Any = None, renderer_context: Any = None):
        return data


def checked_file_id(file_id: int) -> int:
    return checked_id(file_id, "File")


def nzb_response(document: Iterator[bytes], name: str) -> StreamingHttpResponse:
    """The NZB streamed file by file (catalog/nzb.py), never built whole."""
    response = StreamingHttpResponse(document, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = content_disposition(name)
    return response


class CatalogView(APIView):
    authentication_classes = [NodeTokenAuthentication, SessionAuthentication]
    permission_classes = [IsNodeOrStaff]
    staff_permissions: ClassVar[tuple[str, ...]] = VIEW_FILES


class PageView(CatalogView):
    """GET one page of a list: the query checked by `query_in`, the page `select`
    finds, rendered by `page_out` (its context: the request and the query)."""

    query_in: ClassVar[type[Serializer]]
    page_out: ClassVar[type[Serializer]]
    select: ClassVar[Callable[..., Any]]

    def get(self, request: Request) -> Response:
        params = validated_query(self.query_in, request)
        # A list tolerates the replica's bounded lag (core/replicas.py).
        page = read_tolerating_lag(lambda using: type(self).select(**params, using=using))
        return Response(self.page_out(page, context={"request": request, **params}).data)


def page_view(
    query_in: type[Serializer],
    page_out: type[Serializer],
    select: Callable[..., Any],
    summary: str,
    operation_id: str,
    staff_permissions: tuple[str, ...] = VIEW_FILES,
) -> type[PageView]:
    attributes = {
        "query_in": query_in,
        "page_out": page_out,
        "select": select,
        "__doc__": summary,
        "staff_permissions": staff_permissions,
    }
    name = "".join(word.title() for word in operation_id.split("_")) + "View"
    view = type(name, (PageView,), attributes)
    schema = extend_schema(
        parameters=[query_in],
        responses={200: page_out, **ERRORS},
        summary=summary,
        operation_id=operation_id,
    )
    return extend_schema_view(get=schema)(view)  # type: ignore[no-any-return]


FileListView = page_view(
    FileListIn, FilePageOut, selectors.file_page, "List catalog files, newest first", "files_list"
)


class OneView(CatalogView):
    """GET one row by the id in the URL: `find(id)` (which checks the id and
    raises NotFound), rendered by `out` (its context: the request)."""

    out: ClassVar[type[Serializer]]
    find: ClassVar[Callable[[int], Any]]

    def get(self, request: Request, **url: int) -> Response:
        (key,) = url.values()
        return Response(self.out(type(self).find(key), context={"request": request}).data)


def one_view(
    out: type[Serializer],
    find: Callable[[int], Any],
    summary: str,
    operation_id: str,
    staff_permissions: tuple[str, ...] = VIEW_FILES,
) -> type[OneView]:
    name = "".join(word.title() for word in operation_id.split("_")) + "View"
    attributes = {"out": out, "find": find, "__doc__": summary}
    view = type(name, (OneView,), {**attributes, "staff_permissions": staff_permissions})
    schema = extend_schema(
        responses={200: out, **ERRORS}, summary=summary, operation_id=operation_id
    )
    return extend_schema_view(get=schema)(view)  # type: ignore[no-any-return]


def file_detail(file_id: int) -> Any:
    return selectors.file_detail(checked_file_id(file_id))


FileDetailView = one_view(FileDetailOut, file_detail, "One catalog file", "file_retrieve")


class NzbView(CatalogView):
    """GET an NZB for a file: the selector named `selector` gathers what goes in it."""

    renderer_classes = [NzbRenderer, JSONRenderer]
    selector: ClassVar[str]

    @extend_schema(
        responses={(200, CONTENT_TYPE): OpenApiResponse(description="NZB 1.1"), **ERRORS}
    )
    def get(self, request: Request, file_id: int) -> HttpResponseBase:
        return nzb_response(*getattr(selectors, self.selector)(checked_file_id(file_id)))


@extend_schema_view(
    get=extend_schema(summary="The file as an NZB 1.1 document", operation_id="file_nzb")
)
class FileNzbView(NzbView):
    selector = "file_nzb"


@extend_schema_view(
    get=extend_schema(
        summary="Every file of the post this file belongs to, as one NZB",
        operation_id="release_nzb",
    )
)
class ReleaseNzbView(NzbView):
    selector = "release_nzb"


# --- releases -------------------------------------------------------------------


def checked_release_id(release_id: int) -> int:
    return checked_id(release_id, "Release")


def release_nzb_response(release_id: int) -> StreamingHttpResponse:
    """A release's NZB, streamed file by file (a release may have thousands of files)."""
    chunks, name = selectors.release_nzb_stream(release_id)
    return nzb_response(chunks, name)


ReleaseListView = page_view(
    ReleaseListIn,
    ReleasePageOut,
    selectors.release_page,
    "List releases, newest posted first (keyset pagination)",
    "releases_list",
    VIEW_RELEASES,
)


def release_detail(release_id: int) -> Any:
    return selectors.release_detail(checked_release_id(release_id))


ReleaseDetailView = one_view(
    ReleaseDetailOut,
    release_detail,
    "One release with its files",
    "release_retrieve",
    VIEW_RELEASES,
)


class ReleaseByIdNzbView(CatalogView):
    renderer_classes = [NzbRenderer, JSONRenderer]
    staff_permissions = VIEW_RELEASES

    @extend_schema(
        responses={(200, CONTENT_TYPE): OpenApiResponse(description="NZB 1.1"), **ERRORS},
        summary="The release as one NZB 1.1 document (streamed)",
        operation_id="release_by_id_nzb",
    )
    def get(self, request: Request, release_id: int) -> StreamingHttpResponse:
        return release_nzb_response(checked_release_id(release_id))
