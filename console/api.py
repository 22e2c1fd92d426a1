"""The status report over HTTP: `GET /api/v1/status` for nodes and staff."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.authentication import SessionAuthentication
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS
from core.api.permissions import IsNodeOrStaff
from indexer.authentication import NodeTokenAuthentication

from . import selectors
from .serializers import StatusOut


class StatusView(APIView):
    authentication_classes = [NodeTokenAuthentication, SessionAuthentication]
    permission_classes = [IsNodeOrStaff]

    @extend_schema(
        responses={200: StatusOut, 401: ERRORS[401]}, summary="Ranges, nodes, lanes and throughput"
    )
    def get(self, request: Request) -> Response:
        return Response(StatusOut(selectors.seed_status()).data)
