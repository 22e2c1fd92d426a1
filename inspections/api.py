"""HTTP edge of the inspection-lease protocol: validate, call one service, answer.

Errors are raised as typed exceptions by the services and mapped to HTTP in
`core.api.errors`, never here.
"""

from __future__ import annotations

from django.db import DataError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS, ErrorOut, node_id, validated, validated_query
from core.api.errors import domain_status
from core.errors import Invalid, LeaseLost, NotFound, checked_id
from seeding.api import epoch_action_view

from . import relay, services
from .serializers import (
    MAX_LEASE_BYTES,
    MAX_RELEASE_BYTES,
    MAX_REPORT_BYTES,
    MAX_REPORTS_BYTES,
    BodyQuery,
    InspectionLeaseIn,
    InspectionOfferOut,
    ReleaseIn,
    ReportIn,
    ReportOut,
    ReportsIn,
    ReportsOut,
)


def checked_inspection_id(inspection_id: int) -> int:
    return checked_id(inspection_id, "Inspection")


def _inspection(inspection_id: int) -> tuple[int]:
    return (checked_inspection_id(inspection_id),)


class InspectionLeaseView(APIView):
    max_body_bytes = MAX_LEASE_BYTES

    @extend_schema(
        request=InspectionLeaseIn,
        responses={200: InspectionOfferOut, **ERRORS},
        summary="Lease one inspection, or up to `count` at once",
    )
    def post(self, request: Request) -> Response:
        data = validated(InspectionLeaseIn, request)
        offer = services.lease_inspection(node_id(request), data["count"])
        return Response(InspectionOfferOut(offer).data)


InspectionHeartbeatView = epoch_action_view(
    "InspectionHeartbeatView",
    services.heartbeat_inspection,
    _inspection,
    "Keep an inspection lease alive",
)


class InspectionReportView(APIView):
    max_body_bytes = MAX_REPORT_BYTES  # core.api.parsers.body_limit

    @extend_schema(
        request=ReportIn,
        responses={200: ReportOut, **ERRORS},
        summary="Report what an inspection found; the lease ends done",
    )
    def post(self, request: Request, inspection_id: int) -> Response:
        data = validated(ReportIn, request)
        applied = services.report_inspection(
            node_id(request),
            checked_inspection_id(inspection_id),
            data["epoch"],
            {"results": data["results"], "missing": data["missing"]},
        )
        return Response(ReportOut(applied).data)


class InspectionReportsView(APIView):
    max_body_bytes = MAX_REPORTS_BYTES

    @extend_schema(
        request=ReportsIn,
        responses={200: ReportsOut, **ERRORS},
        summary="Report several inspections in one call; each is applied as if sent alone",
    )
    def post(self, request: Request) -> Response:
        data = validated(ReportsIn, request)
        node = node_id(request)
        answers = []
        for item in data["reports"]:
            inspection_id = item["id"]
            try:
                applied = services.report_inspection(
                    node,
                    checked_inspection_id(inspection_id),
                    item["epoch"],
                    {"results": item["results"], "missing": item["missing"]},
                )
            except (Invalid, LeaseLost, NotFound) as exc:  # this report's own answer
                answers.append(_refused(inspection_id, exc))
                continue
            except DataError as exc:  # a value the database refused: this report's alone
                answers.append(_unstorable(inspection_id, exc))
                continue
            answers.append({"id": inspection_id, "status": 200, "release": applied})
        return Response(ReportsOut({"reports": answers}).data)


def _refused(inspection_id: int, exc: Invalid | LeaseLost | NotFound) -> dict[str, object]:
    mapped = domain_status(exc)
    assert mapped is not None  # Invalid, LeaseLost and NotFound are all mapped
    status, code = mapped
    return {"id": inspection_id, "status": status, "error": code, "detail": exc.detail}


def _unstorable(inspection_id: int, exc: DataError) -> dict[str, object]:
    """A report the database refused (its transaction rolled back, nothing applied):
    a 400 of its own, the others of the call go on."""
    reason = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
    detail = f"Inspection {inspection_id}'s report holds a value the database cannot store ({reason}): fix it and send it again."
    return {"id": inspection_id, "status": 400, "error": "invalid", "detail": detail}


class InspectionReleaseView(APIView):
    max_body_bytes = MAX_RELEASE_BYTES

    @extend_schema(
        request=ReleaseIn, responses={204: None, **ERRORS}, summary="Give an inspection back"
    )
    def post(self, request: Request, inspection_id: int) -> Response:
        data = validated(ReleaseIn, request)
        services.release_inspection(
            node_id(request),
            checked_inspection_id(inspection_id),
            data["epoch"],
            error=data.get("error"),
            uncounted=data["uncounted"],
        )
        return Response(status=204)


class InspectionBodyView(APIView):
    @extend_schema(
        parameters=[BodyQuery],
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY,
                description="The article's body from the coordinator's news server: its lines "
                "with dot-stuffing undone, each ending CRLF, without the closing dot.",
            ),
            **ERRORS,
            404: OpenApiResponse(
                ErrorOut,
                description="not_found: unknown inspection, or a message-id its lease does "
                "not name; no_such_article: the news server has none by that id (430)",
            ),
            413: OpenApiResponse(ErrorOut, description="too_large: over INSPECT_RELAY_MAX_BYTES"),
            503: OpenApiResponse(
                ErrorOut, description="unavailable: no news server, or it failed; retry later"
            ),
        },
        summary="Relay one article body of a leased inspection from the coordinator's news server",
    )
    def get(self, request: Request, inspection_id: int) -> HttpResponse:
        data = validated_query(BodyQuery, request)
        body = relay.relay_body(
            node_id(request),
            checked_inspection_id(inspection_id),
            data["epoch"],
            data["message_id"],
        )
        response = HttpResponse(body, content_type="application/octet-stream")
        response["Cache-Control"] = "no-store"
        return response
