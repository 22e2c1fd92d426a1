"""HTTP edge of the range-lease protocol: validate, call one service, answer.

Errors are raised as typed exceptions by the services and mapped to HTTP in
`core.api.errors`, never here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS, ErrorOut, node_id, validated, validated_query
from core.errors import checked_id

from . import relay, services
from .serializers import (
    BatchIn,
    BatchOut,
    EpochIn,
    LeaseOfferOut,
    OverviewsQuery,
    ReleaseIn,
)


def checked_range_id(range_id: int) -> int:
    return checked_id(range_id, "Range")


class RangeLeaseView(APIView):
    @extend_schema(
        request=None, responses={200: LeaseOfferOut, **ERRORS}, summary="Lease one range"
    )
    def post(self, request: Request) -> Response:
        offer = services.lease_range(node_id(request))
        return Response(LeaseOfferOut(offer).data)


class RangeBatchView(APIView):
    @extend_schema(request=BatchIn, responses={200: BatchOut, **ERRORS}, summary="Report a batch")
    def post(self, request: Request, range_id: int) -> Response:
        data = validated(BatchIn, request)
        result = services.report_batch(
            node_id(request),
            checked_range_id(range_id),
            data["epoch"],
            data["next"],
            data["headers"],
            data["files"],
            data["fragments"],
        )
        return Response(BatchOut(result).data)


class EpochActionView(APIView):
    """POST {epoch} for a held lease the URL names: `act(node, *target(**url), epoch)`, 204."""

    act: ClassVar[Callable[..., object]]
    target: ClassVar[Callable[..., tuple[Any, ...]]]

    @extend_schema(request=EpochIn, responses={204: None, **ERRORS})
    def post(self, request: Request, **kwargs: Any) -> Response:
        data = validated(EpochIn, request)
        type(self).act(node_id(request), *type(self).target(**kwargs), data["epoch"])
        return Response(status=204)


def epoch_action_view(
    name: str,
    act: Callable[..., object],
    target: Callable[..., tuple[Any, ...]],
    summary: str,
    errors: dict[int, Any] | None = None,
) -> type[EpochActionView]:
    """An EpochActionView calling `act` on the lease `target` finds in the URL."""
    view = type(name, (EpochActionView,), {"act": act, "target": target, "__doc__": summary})
    responses = {204: None, **(errors or ERRORS)}
    schema = extend_schema(summary=summary, responses=responses)
    return extend_schema_view(post=schema)(view)  # type: ignore[no-any-return]


def _range(range_id: int) -> tuple[int]:
    return (checked_range_id(range_id),)


RangeHeartbeatView = epoch_action_view(
    "RangeHeartbeatView", services.heartbeat_range, _range, "Keep a lease alive"
)
RangeFinishView = epoch_action_view(
    "RangeFinishView", services.finish_range, _range, "Finish a range"
)


class RangeReleaseView(APIView):
    @extend_schema(request=ReleaseIn, responses={204: None, **ERRORS}, summary="Give a range back")
    def post(self, request: Request, range_id: int) -> Response:
        data = validated(ReleaseIn, request)
        services.release_range(
            node_id(request),
            checked_range_id(range_id),
            data["epoch"],
            error=data.get("error"),
            uncounted=data["uncounted"],
        )
        return Response(status=204)


class GzipRenderer(BaseRenderer):
    """Lets a node send `Accept: application/gzip`; the body is streamed, never rendered."""

    media_type = "application/gzip"
    format = "gz"
    charset = None

    def render(
        self, data: Any, accepted_media_type: str | None = None, renderer_context: Any = None
    ) -> bytes:
        return data if isinstance(data, bytes) else b""


class RangeOverviewsView(APIView):
    renderer_classes = [JSONRenderer, GzipRenderer]

    @extend_schema(
        parameters=[OverviewsQuery],
        responses={
            (200, "application/gzip"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description=(
                    "gzip of the overview lines (RFC 3977 OVER format: tab-separated, CRLF, "
                    "no closing dot) of articles max(from, range start) .. min(to, range end, "
                    f"that + {relay.OVERVIEW_SPAN_LIMIT - 1}); headers X-Overview-First and "
                    "X-Overview-Last give the span served. A body that ends without the gzip "
                    "trailer was cut short by the news server: ask again."
                ),
            ),
            **ERRORS,
            404: OpenApiResponse(
                ErrorOut,
                description="not_found: unknown range, or its group is not on the news server",
            ),
            503: OpenApiResponse(
                ErrorOut,
                description="unavailable: the database or the coordinator's news server is unreachable",
            ),
        },
        summary="Relay a leased range's overviews from the coordinator's news server",
    )
    def get(self, request: Request, range_id: int) -> StreamingHttpResponse:
        data = validated_query(OverviewsQuery, request)
        stream = relay.open_overview_relay(
            node_id(request), checked_range_id(range_id), data["epoch"], data["from"], data["to"]
        )
        response = StreamingHttpResponse(stream.body, content_type="application/gzip")
        response["X-Overview-First"] = str(stream.first)
        response["X-Overview-Last"] = str(stream.last)
        response["Cache-Control"] = "no-store"
        return response
