"""Kernel views: health, and JSON errors for /api outside DRF (metrics: fleet.metrics)."""

from django.shortcuts import render
from django.views import csrf as csrf_views
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response

from .api.errors import json_error
from .api.middleware import is_api_request
from .api.views import PUBLIC, ApiView
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


class HealthChecksSerializer(serializers.Serializer):
    database = serializers.ChoiceField(choices=["ok", "error"])
    redis = serializers.ChoiceField(choices=["ok", "error", "not_configured"])
    worker = serializers.ChoiceField(choices=["ok", "stale", "missing", "error"])
    engines = serializers.DictField(
        child=serializers.ChoiceField(choices=["ok", "unreachable", "unknown", "error"]),
        help_text='each engine and registered target by execution target id, e.g. {"docker": "ok", '
        '"remote:<id>": "unreachable"}; "unknown": not probed in the last 95 s; one unreachable '
        "makes `status` degraded (the HTTP status stays 200)",
    )


class HealthSerializer(serializers.Serializer):
    # Writes a fleet.health.HealthReport.
    status = serializers.ChoiceField(choices=["ok", "degraded"])
    checks = HealthChecksSerializer()
    warnings = serializers.ListField(
        child=serializers.CharField(),
        help_text="configuration that is likely wrong, each a sentence saying what to set (e.g. bridged agents "
        "that cannot reach Fleet); empty when none. Warnings do not change `status`.",
    )


class HealthView(ApiView):
    """GET /api/health: public; 200 while this process can serve, 503 when it cannot."""

    authentication_classes = ()  # a stale cookie must not turn a probe into a 401
    access = {"GET": PUBLIC}
    throttle_classes = ()

    @extend_schema(
        operation_id="health",
        summary="Service health (database, Redis, worker heartbeat, engines)",
        auth=[],
        responses={200: HealthSerializer, 503: HealthSerializer},
    )
    def get(self, request):
        report = health_report()
        code = status.HTTP_200_OK if report.serving else status.HTTP_503_SERVICE_UNAVAILABLE
        return Response(HealthSerializer(report).data, status=code)
