"""The error body as the OpenAPI document shows it: one component (`Error`) and, per status, a
response saying which codes it carries, with an example (fleet.api.schema adds them)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


class ErrorOut(serializers.Serializer):
    """Every error answer: a sentence for people and a code for programs."""

    error = serializers.CharField(help_text="what went wrong, for people")
    code = serializers.CharField(help_text="what went wrong, for programs (snake_case; see the status's description)")
    fields = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        required=False,
        help_text="validation errors only: the messages of each offending field (`a.b` for nested ones)",
    )

    class Meta:
        ref_name = "Error"


# status -> (description listing the codes it carries, example body)
_STATUSES = {
    "400": (("The request is invalid: `validation_error` (with `fields`), `bad_request`, `conflicting_auth` "
             "(two credentials), `invalid_state`, `no_container`, or a route's own code."),
            {"error": "Invalid input.", "code": "validation_error", "fields": {"name": ["This field is required."]}}),
    "401": ("No valid credential: `not_authenticated` (none given), `invalid_credentials`.",
            {"error": "Authentication credentials were not provided.", "code": "not_authenticated"}),
    "402": ("`billing_limit`: the caller's plan or the operator's cap allows no more.",
            {"error": "Agent limit reached.", "code": "billing_limit"}),
    "403": (("Not allowed: `permission_denied` (role too low), `missing_scope` (API key), `session_required` "
             "(an API key on a session-only route), `wrong_workspace`, `csrf_failed`."),
            {"error": "You do not have permission to do this.", "code": "permission_denied"}),
    "404": ("`not_found`: no such record, or not one the caller may see.",
            {"error": "Not found.", "code": "not_found"}),
    "409": ("The record is not in a state that allows this: `conflict`, `no_container`, or a route's own code.",
            {"error": "The agent is not running (it is stopped).", "code": "conflict"}),
    "413": ("`payload_too_large`: the request body is larger than this route accepts.",
            {"error": "The request body is too large.", "code": "payload_too_large"}),
    "415": ("`unsupported_media_type`: the body is not JSON (`Content-Type: application/json`).",
            {"error": "Unsupported media type \"text/plain\" in request.", "code": "unsupported_media_type"}),
    "429": ("`rate_limited`: too many requests; the `Retry-After` header says when to try again.",
            {"error": "Too many requests; try again later.", "code": "rate_limited"}),
    "502": (("An upstream failed: `daemon_unreachable` (the container engine), `upstream_failure` "
             "(the agent's runtime or a provider), or a route's own code."),
            {"error": "The container engine could not be reached.", "code": "daemon_unreachable"}),
    "503": ("The service cannot do this now: `unavailable`, or a route's own code.",
            {"error": "The service is unavailable.", "code": "unavailable"}),
}

ERROR_RESPONSES: dict[str, OpenApiResponse] = {
    status: OpenApiResponse(
        response=ErrorOut,
        description=description,
        examples=[OpenApiExample(f"{status} {example['code']}", value=example, status_codes=[status],
                                 response_only=True)],
    )
    for status, (description, example) in _STATUSES.items()
}


def error_responses(*statuses: int) -> dict[int, OpenApiResponse]:
    """For a view's extend_schema(responses={200: XOut, **error_responses(409, 502)})."""
    return {status: ERROR_RESPONSES[str(status)] for status in statuses}
