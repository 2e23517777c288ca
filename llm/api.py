"""Provider and key routes: thin views over llm.services and llm.selectors.

A user's own keys (/api/llm/keys) are session only: they belong to a person, and a workspace
API key acts for a workspace. Workspace keys follow workspaces.access: members read (a key
with workspaces:read too, redacted as always), admins write (sessions only), editors test.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.permissions import IsAuthenticated, SessionOnly, principal_of
from fleet.api.serializers import SuccessOut
from fleet.api.views import ApiView
from fleet.errors import SessionRequired
from workspaces.access import WorkspaceRole
from workspaces.roles import Role, Scope

from . import providers, selectors, services
from .serializers import (
    KeyCreateInput,
    KeyOut,
    KeyTestResultOut,
    KeyUpdateInput,
    ProviderOut,
    SandboxKeyInput,
    SandboxKeyOut,
)

WORKSPACE_READER = WorkspaceRole(Role.VIEWER, key_scope=Scope.WORKSPACES_READ)
WORKSPACE_USER = WorkspaceRole(Role.EDITOR, session_only=True)
WORKSPACE_ADMIN = WorkspaceRole(Role.ADMIN, session_only=True)


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _out(key) -> dict:
    return KeyOut(selectors.key_record(key)).data


def _create(request, created_by, **owner) -> Response:
    body = _valid(KeyCreateInput, request.data)
    key = services.key_create(provider=body["provider"], label=body["label"], api_key=body["apiKey"],
                              base_url=body["baseUrl"], created_by=created_by, **owner)
    return Response(_out(key), status=status.HTTP_201_CREATED)


def _update(request, key) -> Response:
    body = _valid(KeyUpdateInput, request.data)
    key = services.key_update(key=key, label=body.get("label"), api_key=body.get("apiKey"),
                              base_url=body.get("baseUrl"), base_url_given="baseUrl" in body)
    return Response(_out(key))


class ProvidersApi(ApiView):
    access = {"GET": (IsAuthenticated,)}

    @extend_schema(summary="The model providers a key can be saved for", responses=ProviderOut(many=True))
    def get(self, request):
        return Response(ProviderOut(providers.providers(), many=True).data)


class OwnKey(BasePermission):
    """The caller's own key named by the URL, resolved with access (a session only; another
    user's key is 404), and left on `request.llm_key`."""

    def has_permission(self, request, view):
        principal = principal_of(request)
        if principal.is_api_key:
            raise SessionRequired()
        request.llm_key = selectors.key_of_user(user=principal.user, key_id=view.kwargs["llm_key_id"])
        return True


class UserKeysApi(ApiView):
    request_examples = {
        "POST": {
            "An OpenAI key": {"provider": "openai", "label": "personal", "apiKey": "sk-<your key>"},
            "A self-hosted OpenAI-compatible server": {
                "provider": "openai-compatible", "label": "vllm", "apiKey": "<its key>",
                "baseUrl": "https://llm.example.com/v1",
            },
        },
    }
    access = {"GET": (SessionOnly,), "POST": (SessionOnly,)}

    @extend_schema(summary="The caller's own model provider keys (keys [REDACTED])", responses=KeyOut(many=True))
    def get(self, request):
        return Response([_out(k) for k in selectors.keys_of_user(user=self.principal.user)])

    @extend_schema(summary="Save a model provider key of the caller (encrypted, never shown back)",
                   request=KeyCreateInput, responses={201: KeyOut})
    def post(self, request):
        return _create(request, self.principal.user, user=self.principal.user)


class UserKeyDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Rotate the key": {"apiKey": "sk-<the new key>"},
        },
    }
    documented_errors = {"DELETE": (409,)}
    access = {"PATCH": (OwnKey,), "DELETE": (OwnKey,)}

    @extend_schema(summary="Change a key ([REDACTED] keeps the stored key)", request=KeyUpdateInput,
                   responses=KeyOut)
    def patch(self, request, llm_key_id):
        return _update(request, request.llm_key)

    @extend_schema(summary="Delete a key (409 key_in_use while an agent uses it)", responses={200: SuccessOut})
    def delete(self, request, llm_key_id):
        services.key_delete(key=request.llm_key)
        return Response(SuccessOut({"success": True}).data)


class UserKeyTestApi(ApiView):
    access = {"POST": (OwnKey,)}

    @extend_schema(summary="List the provider's models with the key, and record the result", request=None,
                   responses=KeyTestResultOut)
    def post(self, request, llm_key_id):
        return Response(KeyTestResultOut(services.key_test(key=request.llm_key)).data)


class _WorkspaceKeyView(ApiView):
    def key(self, request, llm_key_id):
        return selectors.key_of_workspace(workspace=request.workspace_access.workspace, key_id=llm_key_id)


class WorkspaceKeysApi(ApiView):
    request_examples = {
        "POST": {
            "The team's Anthropic key": {"provider": "anthropic", "label": "team", "apiKey": "sk-ant-<the key>"},
        },
    }
    access = {"GET": (WORKSPACE_READER,), "POST": (WORKSPACE_ADMIN,)}

    @extend_schema(summary="The workspace's model provider keys (keys [REDACTED])", responses=KeyOut(many=True))
    def get(self, request, workspace_id):
        return Response([_out(k) for k in selectors.keys_of_workspace(workspace=request.workspace_access.workspace)])

    @extend_schema(summary="Save a model provider key for the workspace (admins)", request=KeyCreateInput,
                   responses={201: KeyOut})
    def post(self, request, workspace_id):
        return _create(request, self.principal.user, workspace=request.workspace_access.workspace)


class WorkspaceKeyDetailApi(_WorkspaceKeyView):
    request_examples = {
        "PATCH": {
            "Rename it": {"label": "team (billing: ops)"},
        },
    }
    documented_errors = {"DELETE": (409,)}
    access = {"PATCH": (WORKSPACE_ADMIN,), "DELETE": (WORKSPACE_ADMIN,)}

    @extend_schema(summary="Change a workspace key ([REDACTED] keeps the stored key)", request=KeyUpdateInput,
                   responses=KeyOut)
    def patch(self, request, workspace_id, llm_key_id):
        return _update(request, self.key(request, llm_key_id))

    @extend_schema(summary="Delete a workspace key (409 key_in_use while an agent uses it)",
                   responses={200: SuccessOut})
    def delete(self, request, workspace_id, llm_key_id):
        services.key_delete(key=self.key(request, llm_key_id))
        return Response(SuccessOut({"success": True}).data)


class WorkspaceKeyTestApi(_WorkspaceKeyView):
    access = {"POST": (WORKSPACE_USER,)}

    @extend_schema(summary="List the provider's models with the workspace key (editors)", request=None,
                   responses=KeyTestResultOut)
    def post(self, request, workspace_id, llm_key_id):
        return Response(KeyTestResultOut(services.key_test(key=self.key(request, llm_key_id))).data)


class SandboxProviderKeyApi(ApiView):
    """The caller's own key of a provider, one per provider (nemoclaw sandboxes use `nvidia`): a
    view of the user's keys above, kept at its path. Session only: the key belongs to a person,
    and a workspace key acts for a workspace. Never shown back."""
    request_examples = {
        "PUT": {
            "Your NVIDIA key": {"key": "nvapi-<your key>"},
        },
    }

    documented_errors = {"DELETE": (409,)}
    access = {"PUT": (SessionOnly,), "DELETE": (SessionOnly,)}

    @extend_schema(summary="Save the caller's key for a model provider (encrypted, never shown back)",
                   request=SandboxKeyInput, responses=SandboxKeyOut)
    def put(self, request, provider):
        services.require_sandbox_provider(provider)
        body = _valid(SandboxKeyInput, request.data)
        key = services.own_key_set(user=self.principal.user, provider=provider, api_key=body["key"])
        return Response(SandboxKeyOut({"provider": key.provider, "configured": True,
                                       "updated_at": key.updated_at}).data)

    @extend_schema(summary="Remove the caller's key for a model provider", responses={200: SuccessOut})
    def delete(self, request, provider):
        services.own_key_delete(user=self.principal.user, provider=provider)
        return Response(SuccessOut({"success": True}).data)
