"""The status report over HTTP: `GET /api/v1/status` for nodes and for staff
sessions holding STATUS_PERMISSIONS (console/permissions.py)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS, ErrorOut
from core.api.permissions import IsNodeOrStaff
from indexer.authentication import NodeTokenAuthentication

from . import selectors
from .permissions import STATUS_PERMISSIONS
from .serializers import StatusOut

FORBIDDEN = OpenApiResponse(
    ErrorOut, description="forbidden: a staff login without the view permissions it needs"
)


class StatusView(APIView):
    authentication_classes = [NodeTokenAuthentication, SessionAuthentication]
    permission_classes = [IsNodeOrStaff]
    staff_permissions = STATUS_PERMISSIONS

    @extend_schema(
        responses={200: StatusOut, 401: ERRORS[401], 403: FORBIDDEN},
        summary="Ranges, nodes, lanes and throughput",
    )
    def get(self, request: Request) -> Response:
        return Response(StatusOut(selectors.seed_status()).data)
