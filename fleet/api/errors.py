"""The one error body of the API: {"error": sentence, "code": snake_code[, "fields": {...}]}.

Services raise the DRF-free errors of `fleet.errors`; this module is the edge that turns them,
DRF's own exceptions and Django's 404/403/413 into that body, with the status each family of
error means over HTTP (`STATUS_OF`).
"""

from __future__ import annotations

import logging
import re

from django.core.exceptions import ObjectDoesNotExist, RequestDataTooBig
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.db import InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from kombu.exceptions import OperationalError as BrokerError
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from fleet import errors

logger = logging.getLogger(__name__)

# Each family of domain error and what it means over HTTP; a subclass takes its family's status.
STATUS_OF: dict[type[errors.FleetError], int] = {
    errors.InvalidRequest: 400,
    errors.Unauthenticated: 401,
    errors.BillingLimit: 402,
    errors.Forbidden: 403,
    errors.NotFound: 404,
    errors.Conflict: 409,
    errors.PayloadTooLarge: 413,
    errors.TooManyRequests: 429,
    errors.UpstreamFailure: 502,
    errors.Unavailable: 503,
}


def status_of(error: errors.FleetError) -> int:
    for family in type(error).__mro__:
        if family in STATUS_OF:
            return STATUS_OF[family]
    return 400  # a bare FleetError is a request the service refused


def field_errors(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation detail -> {"a.b": ["msg", ...]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            out.update(field_errors(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(v, (dict, list)) for v in detail):
            out[prefix or "non_field_errors"] = [str(v) for v in detail]
        else:
            for i, value in enumerate(detail):
                out.update(field_errors(value, f"{prefix}.{i}" if prefix else str(i)))
    else:
        out[prefix or "non_field_errors"] = [str(detail)]
    return out


_DRF_CODES = {
    exceptions.ParseError: ("validation_error", "Malformed JSON request body."),
    exceptions.NotAuthenticated: ("not_authenticated", None),
    exceptions.AuthenticationFailed: ("invalid_credentials", None),
    exceptions.PermissionDenied: ("permission_denied", None),
    exceptions.NotFound: ("not_found", "Not found."),
    exceptions.MethodNotAllowed: ("method_not_allowed", None),
    exceptions.NotAcceptable: ("not_acceptable", None),
    exceptions.UnsupportedMediaType: ("unsupported_media_type", None),
    exceptions.Throttled: ("rate_limited", "Too many requests; try again later."),
}


def error_body(message: str, code: str, fields: dict | None = None) -> dict:
    body = {"error": message, "code": code}
    if fields:
        body["fields"] = fields
    return body


# What an upstream's own message may carry that users must not see: engine and host addresses.
_ADDRESS = re.compile(
    r"""(?:[a-z][a-z0-9+.-]*://[^\s'"<>),]+)"""  # any URL: tcp://10.0.0.5:2375, http+docker://localhost/...
    r"""|(?:unix:)?/(?:var/)?run/[^\s'"<>),]+"""  # unix socket paths
    r"|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b"  # IPv4, with a port or not
    r"|\[[0-9a-fA-F:]+\](?::\d+)?",  # bracketed IPv6
    re.IGNORECASE,
)


def without_addresses(message: str) -> str:
    """`message` with every URL, socket path and IP address replaced (502 bodies, defect 11)."""
    return _ADDRESS.sub("[internal address]", message)


def domain_error_response(error: errors.FleetError, headers: dict | None = None) -> Response:
    fields = error.fields if isinstance(error, errors.ValidationFailed) else None
    status = status_of(error)
    message = without_addresses(error.message) if status >= 500 else error.message
    return Response(error_body(message, error.code, fields), status=status, headers=headers)


# What a database that is restarting or unreachable raises (also on the connection a restart
# broke, found by the first request after it): the same request may succeed in a moment.
DATABASE_AWAY = (OperationalError, InterfaceError)


def database_away(exc: BaseException, method: str, path: str) -> errors.DatabaseUnavailable | None:
    """The 503 for a database that is away, logged as a warning (an outage, not a bug)."""
    if not isinstance(exc, DATABASE_AWAY):
        return None
    logger.warning("The database could not be reached on %s %s: %s", method, path, exc)
    return errors.DatabaseUnavailable()


def api_exception_handler(exc, context):
    """DRF exception handler: every error leaves in the one body shape."""
    request = context.get("request")
    if request is not None:
        exc = database_away(exc, request.method, request.path) or exc
    # A row another request removed between this one's read and its lock (two DELETEs at once)
    # is gone, as a 404 says: never a 500.
    if isinstance(exc, (Http404, ObjectDoesNotExist)):
        exc = errors.NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = errors.Forbidden()
    elif isinstance(exc, RequestDataTooBig):  # bad input, never a 500
        exc = errors.PayloadTooLarge()
    elif isinstance(exc, BrokerError):
        # A job published after the request's commit (fleet.api.writes) that the broker refused:
        # what the request stored stays, and the job's reconciler publishes it again.
        logger.warning("A job could not be published after the request's commit: %s", exc)
        exc = errors.BrokerUnavailable()
    if isinstance(exc, errors.FleetError):
        return domain_error_response(exc)

    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API exception: ApiErrorMiddleware answers 500

    if isinstance(exc, exceptions.ValidationError):
        fields = field_errors(exc.detail)
        body = error_body(errors.first_field_message(fields), "validation_error", fields)
    else:
        code, message = next(
            ((c, m) for cls, (c, m) in _DRF_CODES.items() if isinstance(exc, cls)),
            ("error", None),
        )
        body = error_body(message or _detail_text(exc.detail), code)
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        response["Retry-After"] = str(max(1, int(exc.wait + 0.999)))
    return Response(body, status=response.status_code, headers=_kept_headers(response))


def _detail_text(detail) -> str:
    if isinstance(detail, (list, dict)):
        return errors.first_field_message(field_errors(detail))
    return str(detail)


def _kept_headers(response) -> dict:
    return {k: v for k, v in response.items() if k in ("Retry-After", "WWW-Authenticate", "Allow")}


def json_error(message: str, code: str, status_code: int) -> JsonResponse:
    """The error body for responses made outside DRF (404 routing, 500s, middleware)."""
    return JsonResponse(error_body(message, code), status=status_code)
