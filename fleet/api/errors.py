"""The one error body of the API: {"error": sentence, "code": snake_code[, "fields": {...}]}."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

logger = logging.getLogger(__name__)


class ApiError(exceptions.APIException):
    """Base for the API's own errors: a status, a code and a readable sentence."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "bad_request"
    default_detail = "The request could not be processed."

    def __init__(self, detail: str | None = None, code: str | None = None):
        self.code = code or self.default_code
        super().__init__(detail or self.default_detail, self.code)


class ConflictingAuth(ApiError):
    default_code = "conflicting_auth"
    default_detail = "Send one credential: conflicting explicit credentials were given."


class InvalidCredentials(ApiError):
    status_code = status.HTTP_401_UNAUTHORIZED
    default_code = "invalid_credentials"
    default_detail = "The credential is invalid or has expired."


class NotAuthenticated(ApiError):
    status_code = status.HTTP_401_UNAUTHORIZED
    default_code = "not_authenticated"
    default_detail = "Authentication credentials were not provided."


class Forbidden(ApiError):
    status_code = status.HTTP_403_FORBIDDEN
    default_code = "permission_denied"
    default_detail = "You do not have permission to perform this action."


class MissingScope(Forbidden):
    default_code = "missing_scope"
    default_detail = "The API key lacks the scope this route needs."


class WrongWorkspace(Forbidden):
    default_code = "wrong_workspace"
    default_detail = "The API key is bound to another workspace."


class SessionRequired(Forbidden):
    default_code = "session_required"
    default_detail = "This route needs a signed-in session; workspace API keys are refused."


class SignupDisabled(Forbidden):
    default_code = "SIGNUP_DISABLED"
    default_detail = "Registration is disabled."


class NotFound(ApiError):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "not_found"
    default_detail = "Not found."


class Conflict(ApiError):
    status_code = status.HTTP_409_CONFLICT
    default_code = "conflict"
    default_detail = "The request conflicts with the current state."


class InvalidState(ApiError):
    default_code = "invalid_state"
    default_detail = "The agent is not in a state that allows this action."


class NoContainer(ApiError):
    """400 on start/restart, 409 on stats/gateway-url (pass status_code)."""

    default_code = "no_container"
    default_detail = "The agent has no container; redeploy it first."

    def __init__(self, detail: str | None = None, *, status_code: int = 400):
        self.status_code = status_code
        super().__init__(detail)


class RuntimeManaged(Conflict):
    default_code = "runtime_managed"
    default_detail = "This channel is managed by the runtime; the route is for legacy channels only."


class BillingLimit(ApiError):
    status_code = status.HTTP_402_PAYMENT_REQUIRED
    default_code = "billing_limit"
    default_detail = "Your plan's agent limit has been reached."


class DaemonUnreachable(ApiError):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_code = "daemon_unreachable"
    default_detail = "The container daemon could not be reached."


class PayloadTooLarge(ApiError):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"
    default_detail = "The request body is too large."


class ValidationFailed(ApiError):
    """A 400 that names the offending fields."""

    default_code = "validation_error"
    default_detail = "Invalid input."

    def __init__(self, fields: dict[str, list[str] | str], detail: str | None = None):
        self.fields = {k: v if isinstance(v, list) else [v] for k, v in fields.items()}
        super().__init__(detail or _first_message(self.fields))


def _first_message(fields: dict) -> str:
    for name, messages in fields.items():
        if messages:
            return f"{name}: {messages[0]}" if name != "non_field_errors" else str(messages[0])
    return ValidationFailed.default_detail


def _flatten(detail, prefix: str = "") -> dict[str, list[str]]:
    """DRF's nested validation detail -> {"a.b": ["msg", ...]}."""
    out: dict[str, list[str]] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            out.update(_flatten(value, name))
    elif isinstance(detail, list):
        if all(not isinstance(v, (dict, list)) for v in detail):
            out[prefix or "non_field_errors"] = [str(v) for v in detail]
        else:
            for i, value in enumerate(detail):
                out.update(_flatten(value, f"{prefix}.{i}" if prefix else str(i)))
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


def api_exception_handler(exc, context):
    """DRF exception handler: every error leaves in the one body shape."""
    if isinstance(exc, Http404):
        exc = NotFound()
    elif isinstance(exc, DjangoPermissionDenied):
        exc = Forbidden()
    elif isinstance(exc, RequestDataTooBig):  # bad input, never a 500
        exc = PayloadTooLarge()

    from rest_framework.views import exception_handler as drf_exception_handler  # circular at import time

    response = drf_exception_handler(exc, context)
    if response is None:
        return None  # not an API exception: ApiErrorMiddleware answers 500

    if isinstance(exc, ValidationFailed):
        body = error_body(str(exc.detail), exc.code, exc.fields)
    elif isinstance(exc, ApiError):
        body = error_body(str(exc.detail), exc.code)
    elif isinstance(exc, exceptions.ValidationError):
        fields = _flatten(exc.detail)
        body = error_body(_first_message(fields), "validation_error", fields)
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
        fields = _flatten(detail)
        return _first_message(fields)
    return str(detail)


def _kept_headers(response) -> dict:
    return {k: v for k, v in response.items() if k in ("Retry-After", "WWW-Authenticate", "Allow")}


def json_error(message: str, code: str, status_code: int) -> JsonResponse:
    """The error body for responses made outside DRF (404 routing, 500s, middleware)."""
    return JsonResponse(error_body(message, code), status=status_code)
