"""Kernel views: health, and JSON errors for /api outside DRF (metrics: fleet.metrics)."""

from django.shortcuts import render
from django.views import csrf as csrf_views
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from .api.authentication import read_credential, verify_credential
from .api.errors import json_error
from .api.middleware import is_api_request
from .api.views import PUBLIC, ApiView
from .errors import FleetError
from .health import health_report


def home(request):
    """`/` (what `make run` prints, the admin's "View site"): links to the console, the API
    documentation and health."""
    return render(request, "fleet/home.html")


@csrf_exempt  # it answers 404 to every method; Django's CSRF check would answer an HTML 403 first
def api_not_found(request, *args, **kwargs):
    return json_error("Not found.", "not_found", 404)


def page_not_found(request, exception=None):
    """handler404: an /api path no route takes (the catch-all normally answers first)."""
    if is_api_request(request):
        return api_not_found(request)
    return defaults.page_not_found(request, exception)


def permission_denied(request, exception=None):
    """handler403, outside DRF."""
    if is_api_request(request):
        return json_error("You do not have permission to do this.", "permission_denied", 403)
    return defaults.permission_denied(request, exception)


def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: Django's CSRF check refused a form post (the admin); JSON under /api."""
    if is_api_request(request):
        return json_error("The request failed the CSRF check.", "csrf_failed", 403)
    return csrf_views.csrf_failure(request, reason)


def bad_request(request, exception=None):
    """handler400: e.g. a disallowed Host header, before any view runs."""
    if is_api_request(request):
        return json_error("The request could not be understood.", "bad_request", 400)
    return defaults.bad_request(request, exception)


def server_error(request):
    """handler500: a fault outside the views (ApiErrorMiddleware covers the views)."""
    if is_api_request(request):
        return json_error("Internal server error.", "server_error", 500)
    return defaults.server_error(request)


ENGINE_WORDS = ["ok", "unreachable", "unknown", "error"]


class HealthChecksSerializer(serializers.Serializer):
    database = serializers.ChoiceField(choices=["ok", "error"])
    redis = serializers.ChoiceField(choices=["ok", "error", "not_configured"])
    worker = serializers.ChoiceField(choices=["ok", "stale", "missing", "error"])
    engines = serializers.DictField(
        child=serializers.ChoiceField(choices=ENGINE_WORDS),
        help_text='each engine by execution target id, e.g. {"docker": "ok", "remote:<id>": "unreachable"}; '
        "registered targets (`remote:<id>`, `k8s:<id>`) are listed to a platform admin's session only, "
        "anyone else finds them counted in `totals.engines`; \"unknown\": not probed in the last 95 s; "
        "one unreachable makes `status` degraded (the HTTP status stays 200)",
    )
    scheduler = serializers.DictField(
        child=serializers.ChoiceField(choices=["ok", "late", "error"]),
        help_text='each enabled periodic job by name, e.g. {"agents: monitor running agents": "ok"}; "late": '
        "not sent by beat, or not run by a worker, for three of its periods; one late makes `status` degraded "
        "(the HTTP status stays 200)",
    )


class HealthTotalsSerializer(serializers.Serializer):
    engines = serializers.DictField(
        child=serializers.IntegerField(), required=False,
        help_text='the registered targets left out of `checks.engines`, counted per word, e.g. {"ok": 3, '
        '"unreachable": 1}; {} for a platform admin, who sees them by id',
    )


class HealthSerializer(serializers.Serializer):
    # Writes a fleet.health.HealthReport.
    status = serializers.ChoiceField(choices=["ok", "degraded"])
    checks = HealthChecksSerializer()
    totals = HealthTotalsSerializer()
    warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="configuration that is likely wrong, each a sentence saying what to set (e.g. bridged agents "
        "that cannot reach Fleet); empty when none. Warnings do not change `status`.",
    )


def _is_platform_admin_session(request) -> bool:
    """Whether the caller is a platform admin's session: health's per-target list is theirs.
    Any credential problem (none, broken, a key) is simply the public answer, never a 401."""
    try:
        credential = read_credential(request)
        principal = verify_credential(credential) if credential is not None else None
    except FleetError:
        return False
    return principal is not None and principal.is_session and principal.is_platform_admin


class HealthView(ApiView):
    """GET /api/health: public; 200 while this process can serve, 503 when it cannot."""

    authentication_classes = ()  # a stale cookie must not turn a probe into a 401
    access = {"GET": PUBLIC}
    throttle_classes = ()

    @extend_schema(
        operation_id="health",
        summary="Service health (database, Redis, worker heartbeat, engines, periodic jobs)",
        auth=[],
        responses={200: HealthSerializer, 503: HealthSerializer},
    )
    def get(self, request):
        report = health_report(detailed=_is_platform_admin_session(request))
        code = status.HTTP_200_OK if report.serving else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(HealthSerializer(report).data, status=code)
