"""The operators' routes of the model gateway, relative to /api/ (the gateway itself, /llm/v1,
is served on the async edge: apps.py)."""

from django.urls import path

from .api import ModelGatewayLimitsApi, ModelGatewayTrafficApi

urlpatterns = [
    path("agents/<uuid:agent_id>/model-gateway", ModelGatewayLimitsApi.as_view(), name="agent-model-gateway"),
    path("agents/<uuid:agent_id>/model-gateway/traffic", ModelGatewayTrafficApi.as_view(),
         name="agent-model-gateway-traffic"),
]
