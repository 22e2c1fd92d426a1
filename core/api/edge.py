"""What every API view shares: the error answers it documents, the calling node,
and its input checked by a serializer (a 400 naming the field otherwise)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request

from core.api.permissions import NodeIdentity


class ErrorOut(serializers.Serializer):
    error = serializers.CharField()
    detail = serializers.CharField()


ERRORS = {
    400: OpenApiResponse(ErrorOut, description="invalid: a field is missing or out of range"),
    401: OpenApiResponse(ErrorOut, description="unauthenticated"),
    404: OpenApiResponse(ErrorOut, description="not_found: unknown range"),
    409: OpenApiResponse(
        ErrorOut, description="lease_lost: not this node's lease, or a stale epoch"
    ),
    413: OpenApiResponse(ErrorOut, description="too_large"),
    503: OpenApiResponse(ErrorOut, description="unavailable: retry with backoff"),
}


def node_id(request: Request) -> int:
    """The calling node's id (IsNode has already admitted only nodes)."""
    user = request.user
    if not isinstance(user, NodeIdentity):
        raise NotAuthenticated()
    return user.id


def validated(serializer_class: type, request: Request) -> dict[str, Any]:
    """The request body checked by `serializer_class` (a 400 naming the field otherwise)."""
    serializer = serializer_class(data=request.data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)


def validated_query(serializer_class: type, request: Request) -> dict[str, Any]:
    """The query string checked by `serializer_class`."""
    serializer = serializer_class(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
