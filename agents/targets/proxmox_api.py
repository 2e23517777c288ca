"""/api/admin/proxmox: the Proxmox target (experimental) as the platform admin sees it: its
settings (never the token secret), who may deploy to it (the one grant model), and a test."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from fleet.api.permissions import PlatformAdminOnly
from fleet.api.views import ApiView

from ..backends.base import BackendError
from ..backends.registry import UnknownTarget, backend_for_target
from .grants import GrantsIn, GrantsOut, grants_of, grants_parse, target_grants_set

TARGET_ID = "proxmox"


class ProxmoxOut(serializers.Serializer):
    executionTargetId = serializers.CharField()  # noqa: N815 - API names
    configured = serializers.BooleanField(help_text="PROXMOX_URL is set")
    url = serializers.CharField()
    node = serializers.CharField()
    storage = serializers.CharField()
    template = serializers.CharField()
    tokenId = serializers.CharField()  # noqa: N815
    grants = GrantsOut()


class ProxmoxIn(serializers.Serializer):
    grants = GrantsIn()


class ProxmoxTestOut(serializers.Serializer):
    ok = serializers.BooleanField()
    version = serializers.CharField()
    error = serializers.CharField(allow_null=True)


def proxmox_view() -> dict:
    return {"executionTargetId": TARGET_ID, "configured": bool(settings.PROXMOX_URL), "url": settings.PROXMOX_URL,
            "node": settings.PROXMOX_NODE, "storage": settings.PROXMOX_STORAGE,
            "template": settings.PROXMOX_TEMPLATE, "tokenId": settings.PROXMOX_TOKEN_ID,
            "grants": grants_of(TARGET_ID).as_json()}


class ProxmoxApi(ApiView):
    request_examples = {
        "PATCH": {
            "Open to one user group": {"grants": {"allAccounts": False, "userGroups": ["<group id>"]}},
        },
    }
    access = {"GET": (PlatformAdminOnly,), "PATCH": (PlatformAdminOnly,)}

    @extend_schema(responses=ProxmoxOut)
    def get(self, request):
        """The Proxmox target's settings (its token never shown)."""
        return Response(ProxmoxOut(proxmox_view()).data)

    @extend_schema(request=ProxmoxIn, responses=ProxmoxOut)
    def patch(self, request):
        """Change the Proxmox target's settings."""
        body = ProxmoxIn(data=request.data)
        body.is_valid(raise_exception=True)
        grants = grants_parse(body.validated_data["grants"], current=grants_of(TARGET_ID))
        target_grants_set(execution_target_id=TARGET_ID, grants=grants, created_by=self.principal.user)
        return Response(ProxmoxOut(proxmox_view()).data)


class ProxmoxTestApi(ApiView):
    access = {"POST": (PlatformAdminOnly,)}

    @extend_schema(request=None, responses=ProxmoxTestOut)
    def post(self, request):
        """Reach the Proxmox API with the stored settings and record the result."""
        try:
            version = backend_for_target(TARGET_ID).probe()
        except (UnknownTarget, BackendError) as exc:
            return Response(ProxmoxTestOut({"ok": False, "version": "", "error": str(exc)}).data)
        return Response(ProxmoxTestOut({"ok": True, "version": version, "error": None}).data)
