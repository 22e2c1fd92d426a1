"""HTTP edge of the group-lease protocol: validate, call one service, answer.

The snapshot upload never goes through a DRF parser and never touches
`request.body`: the body is read from the WSGI input in chunks and streamed
to disk by the service, so a gigabyte window costs a megabyte of memory.
Errors are raised by the services as typed exceptions and mapped to HTTP
in `core.api.errors`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.http import FileResponse, HttpRequest
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
)
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS, ErrorOut, node_id, validated, validated_query
from core.api.parsers import content_length
from seeding.api import epoch_action_view

from . import services
from .serializers import (
    LaneIn,
    LaneOfferOut,
    NextIn,
    NextOut,
    SnapshotPutQueryIn,
    SnapshotQueryIn,
)
from .snapshots import CHUNK_BYTES

LANE_ERRORS = {**ERRORS, 404: OpenApiResponse(ErrorOut, description="not_found: unknown group")}


class GroupLeaseView(APIView):
    @extend_schema(
        request=LaneIn, responses={200: LaneOfferOut, **ERRORS}, summary="Lease a group's lane"
    )
    def post(self, request: Request) -> Response:
        data = validated(LaneIn, request)
        offer = services.lease_lane(node_id(request), data["lane"])
        return Response(LaneOfferOut(offer).data)


class LaneNextView(APIView):
    @extend_schema(
        request=NextIn, responses={200: NextOut, **LANE_ERRORS}, summary="The lane's next range"
    )
    def post(self, request: Request, group_id: int, lane: str) -> Response:
        data = validated(NextIn, request)
        handed = services.next_lane_range(
            node_id(request), group_id, lane, data["epoch"], read=data.get("read")
        )
        return Response(NextOut({"range": handed}).data)


def _lane(group_id: int, lane: str) -> tuple[int, str]:
    return group_id, lane


LaneHeartbeatView = epoch_action_view(
    "LaneHeartbeatView", services.heartbeat_lane, _lane, "Keep a lane lease alive", LANE_ERRORS
)
LaneReleaseView = epoch_action_view(
    "LaneReleaseView", services.release_lane, _lane, "Give a lane back", LANE_ERRORS
)


def body_chunks(request: HttpRequest, length: int | None) -> Iterator[bytes]:
    """The request body in chunks, straight from the WSGI input (never buffered whole).

    With a Content-Length the stream is read up to it (a short read means the
    client went away; the service notices the missing bytes). Without one the
    server has de-chunked a chunked upload and the input ends at its end.
    """
    if length is not None:
        remaining = length
        while remaining > 0:
            data = request.read(min(CHUNK_BYTES, remaining))
            if not data:
                return
            remaining -= len(data)
            yield data
        return
    stream = request.META["wsgi.input"]
    while True:
        data = stream.read(CHUNK_BYTES)
        if not data:
            return
        yield data


EPOCH_PARAM = OpenApiParameter("epoch", int, required=True, description="The lane's epoch.")
NEXT_PARAM = OpenApiParameter(
    "next", int, required=True, description="The first article the window has not read."
)


class LaneSnapshotView(APIView):
    # No parser may read this body: the view streams it itself.
    parser_classes: list[Any] = []

    @extend_schema(
        parameters=[EPOCH_PARAM, NEXT_PARAM],
        request={"application/gzip": bytes},
        responses={204: None, **LANE_ERRORS},
        summary="Store the lane's window snapshot (streamed to disk, replaced whole)",
    )
    def put(self, request: Request, group_id: int, lane: str) -> Response:
        query = validated_query(SnapshotPutQueryIn, request)
        raw = request._request
        length = content_length(raw.META)
        services.store_snapshot(
            node_id(request),
            group_id,
            lane,
            query["epoch"],
            query["next"],
            body_chunks(raw, length),
            length,
        )
        return Response(status=204)

    @extend_schema(
        parameters=[EPOCH_PARAM],
        responses={
            (200, "application/gzip"): OpenApiResponse(
                bytes, description="The snapshot; X-Snapshot-Next names its article."
            ),
            307: OpenApiResponse(
                description="With object storage: Location is a presigned URL of the "
                "snapshot (fetch it without the token); X-Snapshot-Next names its article."
            ),
            **LANE_ERRORS,
        },
        summary="Fetch the lane's window snapshot",
    )
    def get(self, request: Request, group_id: int, lane: str) -> FileResponse | Response:
        query = validated_query(SnapshotQueryIn, request)
        snapshot = services.open_snapshot(node_id(request), group_id, lane, query["epoch"])
        if isinstance(snapshot, services.SnapshotLink):
            # Object storage: the bytes come from there, not through the coordinator.
            return Response(
                status=307,
                headers={
                    "Location": snapshot.url,
                    "X-Snapshot-Next": str(snapshot.next),
                    "X-Snapshot-Size": str(snapshot.size),
                },
            )
        response = FileResponse(snapshot.file, content_type="application/gzip")
        response.block_size = CHUNK_BYTES
        response["Content-Length"] = str(snapshot.size)
        response["X-Snapshot-Next"] = str(snapshot.next)
        return response
