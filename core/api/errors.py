"""The one place that maps every error to HTTP.

Every error leaves the API as `{"error": CODE, "detail": sentence}` (see
docs/api.md, "Errors"). Services raise the domain errors of `core.errors`,
which know nothing of HTTP; `DOMAIN_ERRORS` gives each its status and code.
DRF's own exceptions and database failures are translated here too, so no
view decides a status code by itself and nothing a client sends becomes a 500.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, DataError
from django.http import Http404, JsonResponse, UnreadablePostError
from rest_framework import exceptions as drf

from core.database_faults import RETRY_AFTER_SECONDS, if_unavailable
from core.errors import (
    ArticleMissing,
    DomainError,
    Invalid,
    LeaseLost,
    NotFound,
    StorageFull,
    Throttled,
    TooLarge,
    TooManyLeases,
    Unavailable,
    UploadInProgress,
)

logger = logging.getLogger(__name__)

RETRY_AFTER_UNAVAILABLE = str(RETRY_AFTER_SECONDS)
DATABASE_SWITCHING = (
    "The database is unreachable or switching to a standby; retry after Retry-After seconds."
)
RETRY_AFTER_STORAGE_FULL = "60"  # space comes back when an operator frees it

# Status and code of each domain error (docs/api.md, "Errors"). A subclass
# (NewsServerNotConfigured, UnknownGroups) answers as its nearest listed base.
DOMAIN_ERRORS: dict[type[DomainError], tuple[int, str]] = {
    Invalid: (400, "invalid"),
    NotFound: (404, "not_found"),
    ArticleMissing: (404, "no_such_article"),
    LeaseLost: (409, "lease_lost"),
    TooLarge: (413, "too_large"),
    Throttled: (429, "throttled"),
    TooManyLeases: (429, "too_many_leases"),
    UploadInProgress: (429, "upload_in_progress"),
    Unavailable: (503, "unavailable"),
    StorageFull: (507, "storage_full"),
}


def domain_status(exc: DomainError) -> tuple[int, str] | None:
    """(status, code) of a domain error by its nearest mapped class; None if unmapped."""
    for cls in type(exc).__mro__:
        if cls in DOMAIN_ERRORS:
            return DOMAIN_ERRORS[cls]
    return None


def error_response(
    status: int, code: str, detail: str, retry_after: int | None = None
) -> JsonResponse:
    response = JsonResponse({"error": code, "detail": detail}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    elif status == 503:
        response["Retry-After"] = RETRY_AFTER_UNAVAILABLE
    elif status == 507:
        response["Retry-After"] = RETRY_AFTER_STORAGE_FULL
    if status == 401:
        response["WWW-Authenticate"] = 'Bearer realm="api"'
    return response


def describe_validation(detail: Any, path: str = "") -> list[str]:
    """Flatten DRF's nested error detail into "field: message" sentences."""
    if isinstance(detail, dict):
        out: list[str] = []
        for key, value in detail.items():
            if key == "non_field_errors":
                out += describe_validation(value, path)
            else:
                out += describe_validation(value, f"{path}.{key}" if path else str(key))
        return out
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            message = " ".join(str(item) for item in detail)
            return [f"{path}: {message}" if path else message]
        out = []
        for index, item in enumerate(detail):
            if item:
                out += describe_validation(item, f"{path}[{index}]")
        return out
    return [f"{path}: {detail}" if path else str(detail)]


def _translate(exc: Exception) -> tuple[int, str, str] | None:
    if isinstance(exc, DomainError):
        mapped = domain_status(exc)
        # An unmapped one is a coordinator bug: answered as a logged 500.
        return None if mapped is None else (*mapped, exc.detail)
    if isinstance(exc, drf.ValidationError):
        sentences = describe_validation(exc.detail)
        return 400, "invalid", "; ".join(sentences[:5]) or "The request is invalid."
    if isinstance(exc, drf.ParseError):
        return 400, "invalid", f"The body is not valid JSON ({exc.detail}). Send a JSON object."
    if isinstance(exc, drf.NotAuthenticated | drf.AuthenticationFailed):
        detail = str(exc.detail)
        if isinstance(exc, drf.NotAuthenticated):
            detail = "Send 'Authorization: Bearer <token>' with a node token an operator issued."
        return 401, "unauthenticated", detail
    if isinstance(exc, drf.PermissionDenied):
        return 403, "forbidden", str(exc.detail)
    if isinstance(exc, Http404 | drf.NotFound):
        return 404, "not_found", "Nothing exists at this address; check the id in the URL."
    if isinstance(exc, drf.MethodNotAllowed):
        return 405, "method_not_allowed", str(exc.detail)
    if isinstance(exc, drf.UnsupportedMediaType):
        return 415, "unsupported_media_type", f"{exc.detail} Send Content-Type: application/json."
    if isinstance(exc, drf.NotAcceptable):
        return 406, "not_acceptable", str(exc.detail)
    if isinstance(exc, drf.Throttled):
        return 429, "throttled", str(exc.detail)
    if isinstance(exc, RequestDataTooBig):
        return 413, "too_large", "The body is over the configured limit; send smaller batches."
    if isinstance(exc, UnreadablePostError):
        # The client stopped sending, went away, or sent slower than the read
        # deadline allows (core/gunicorn_worker.py): nothing was done.
        return 400, "invalid", f"The body broke off before its end ({exc}); send it again."
    if isinstance(exc, DataError):
        # A value PostgreSQL cannot hold (a number out of range, a NUL in text)
        # slipped past validation: the client's input, not our failure.
        if "0x00" in str(exc):
            return 400, "invalid", "A text value holds a NUL character; send it without one."
        return 400, "invalid", "A value is out of range for the database; check the numbers sent."
    # A failover, a restart or a lost connection (core/database_faults.py, by SQLSTATE;
    # psycopg's own errors come from sessions Django does not wrap: the upload
    # guards', the news-server slots'): the connection is dropped, the node retries.
    if if_unavailable(exc):
        return 503, "unavailable", DATABASE_SWITCHING
    if isinstance(exc, drf.APIException):
        return exc.status_code, "error", str(exc.detail)
    if isinstance(exc, DatabaseError):
        logger.exception("database error")
        return 503, "unavailable", "The database refused the request; retry with backoff."
    return None


def exception_handler(exc: Exception, context: dict[str, Any]) -> JsonResponse | None:
    """DRF's EXCEPTION_HANDLER: every error becomes the contract's JSON shape."""
    translated = _translate(exc)
    if translated is None:
        return None  # unexpected: ApiErrorMiddleware logs it and answers JSON
    return error_response(*translated, retry_after=_retry_after(exc))


def _retry_after(exc: Exception) -> int | None:
    return exc.retry_after if isinstance(exc, Throttled) else None


def response_for_unhandled(exc: Exception) -> JsonResponse:
    translated = _translate(exc)
    if translated is not None:
        return error_response(*translated, retry_after=_retry_after(exc))
    logger.exception("unhandled error in the API", exc_info=exc)
    return error_response(500, "internal", "The coordinator failed; the error is logged.")
