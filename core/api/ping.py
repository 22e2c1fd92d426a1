"""`GET /api/v1/ping`: a node checks its token and the coordinator's reach.

Authentication, one trivial query (the database's clock) and a small JSON
answer: the no-op a fleet benchmark measures the protocol's calls against
(bench/bench_fleet.py, docs/performance.md).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.edge import ERRORS
from core.sql import queries


class PingOut(serializers.Serializer):
    ok = serializers.BooleanField()
    node = serializers.CharField()
    time = serializers.IntegerField(help_text="the database's clock, Unix seconds")


class PingView(APIView):
    @extend_schema(
        responses={200: PingOut, 401: ERRORS[401], 503: ERRORS[503]},
        summary="Check the token and the coordinator (a no-op)",
    )
    def get(self, request: Request) -> Response:
        row = queries.fetchone("database_clock", {})
        assert row is not None  # SELECT without FROM always returns its row
        return Response({"ok": True, "node": str(request.user), "time": int(row.now)})
