"""Kernel views: health, the JSON 404 for unknown /api routes (metrics: fleet.metrics)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from .api.errors import json_error
from .health import health_report


def api_not_found(request, *args, **kwargs):
    return json_error("Not found.", "not_found", 404)


class HealthChecksSerializer(serializers.Serializer):
    database = serializers.ChoiceField(choices=["ok", "error"])
    redis = serializers.ChoiceField(choices=["ok", "error", "not_configured"])
    worker = serializers.ChoiceField(choices=["ok", "stale", "missing", "error"])


class HealthSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["ok", "degraded"])
    checks = HealthChecksSerializer()


class HealthView(APIView):
    """GET /api/health: public; 200 while this process can serve, 503 when it cannot."""

    authentication_classes = ()  # a stale cookie must not turn a probe into a 401
    permission_classes = (AllowAny,)
    throttle_classes = ()

    @extend_schema(
        operation_id="health",
        summary="Service health (database, Redis, worker heartbeat)",
        auth=[],
        responses={200: HealthSerializer, 503: HealthSerializer},
    )
    def get(self, request):
        body, status = health_report()
        return Response(body, status=status)
