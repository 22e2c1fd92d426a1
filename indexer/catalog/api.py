"""HTTP edge of the catalog: file lists, one file, NZB documents.

Reads for nodes (token) and operators (staff session). Errors are typed
exceptions mapped to HTTP in `indexer.api.errors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar

from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.authentication import SessionAuthentication
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from indexer.api.authentication import NodeTokenAuthentication
from indexer.api.edge import ErrorOut, validated_query
from indexer.api.permissions import IsNodeOrStaff
from indexer.errors import checked_id

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

ERRORS = {
    400: OpenApiResponse(ErrorOut, description="invalid: a parameter is out of range"),
    401: OpenApiResponse(ErrorOut, description="unauthenticated"),
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
    """The NZB streamed file by file (indexer/catalog/nzb.py), never built whole."""
    response = StreamingHttpResponse(document, content_type=CONTENT_TYPE)
    response["Content-Disposition"] = content_disposition(name)
    return response


class CatalogView(APIView):
    authentication_classes = [NodeTokenAuthentication, SessionAuthentication]
    permission_classes = [IsNodeOrStaff]


class FileListView(CatalogView):
    @extend_schema(
        parameters=[FileListIn],
        responses={200: FilePageOut, **ERRORS},
        summary="List catalog files, newest first",
        operation_id="files_list",
    )
    def get(self, request: Request) -> Response:
        params = validated_query(FileListIn, request)
        page = selectors.file_page(**params)
        context = {"request": request, "page": params["page"], "after": params.get("after")}
        return Response(FilePageOut(page, context=context).data)


class FileDetailView(CatalogView):
    @extend_schema(
        responses={200: FileDetailOut, **ERRORS},
        summary="One catalog file",
        operation_id="file_retrieve",
    )
    def get(self, request: Request, file_id: int) -> Response:
        return Response(FileDetailOut(selectors.file_detail(checked_file_id(file_id))).data)


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


class ReleaseListView(CatalogView):
    @extend_schema(
        parameters=[ReleaseListIn],
        responses={200: ReleasePageOut, **ERRORS},
        summary="List releases, newest posted first (keyset pagination)",
        operation_id="releases_list",
    )
    def get(self, request: Request) -> Response:
        params = validated_query(ReleaseListIn, request)
        page = selectors.release_page(**params)
        return Response(ReleasePageOut(page, context={"request": request}).data)


class ReleaseDetailView(CatalogView):
    @extend_schema(
        responses={200: ReleaseDetailOut, **ERRORS},
        summary="One release with its files",
        operation_id="release_retrieve",
    )
    def get(self, request: Request, release_id: int) -> Response:
        detail = selectors.release_detail(checked_release_id(release_id))
        return Response(ReleaseDetailOut(detail, context={"request": request}).data)


class ReleaseByIdNzbView(CatalogView):
    renderer_classes = [NzbRenderer, JSONRenderer]

    @extend_schema(
        responses={(200, CONTENT_TYPE): OpenApiResponse(description="NZB 1.1"), **ERRORS},
        summary="The release as one NZB 1.1 document (streamed)",
        operation_id="release_by_id_nzb",
    )
    def get(self, request: Request, release_id: int) -> StreamingHttpResponse:
        return release_nzb_response(checked_release_id(release_id))
