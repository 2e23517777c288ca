"""GET /agents, POST /agents/deploy, POST /agents/adopt."""

from __future__ import annotations

from django.http import HttpResponse, HttpResponseNotModified
from django.middleware.gzip import re_accepts_gzip
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.fields import IntegerField, NumberField, RawStringField
from fleet.api.gzip import GZipMiddleware, with_random_name
from fleet.api.permissions import IsAuthenticated, RequireScope, principal_of, require_scope
from fleet.api.renderers import dumps
from fleet.api.views import ApiView
from workspaces.roles import Scope

from .. import list_cache
from ..selectors import agent_list
from ..services.adopt import AdoptRequest, agent_adopt
from ..services.deploy import agent_deploy
from ..services.selection import DeployRequest
from .serializers import AgentDeployOut, AgentListItemOut, AgentOut

LIST_SCOPES = ("accessible", "owned")
LIST_FORMAT = list_cache.list_format(AgentListItemOut)  # part of every list ETag


class AgentListApi(ApiView):
    access = {"GET": (RequireScope(Scope.AGENTS_READ),)}

    class FilterSerializer(serializers.Serializer):
        scope = serializers.ChoiceField(choices=LIST_SCOPES, required=False, default="accessible")

    @extend_schema(parameters=[FilterSerializer], responses=AgentListItemOut(many=True))
    def get(self, request):
        scope = request.query_params.get("scope", "accessible")
        if scope not in LIST_SCOPES:  # the serializer only for the error body: it is the slow path
            query = self.FilterSerializer(data=request.query_params)
            query.is_valid(raise_exception=True)
            scope = query.validated_data["scope"]
        # The version first (agents.list_cache): the rows read after it are at least as new.
        key = list_cache.caller_key(self.principal, scope)
        etag = list_cache.list_etag(list_cache.list_version(), key, LIST_FORMAT)
        if list_cache.etag_matches(request.META.get("HTTP_IF_NONE_MATCH", ""), etag):
            response = HttpResponseNotModified()
            response["ETag"] = etag
            return response
        body = list_cache.cached_body(key, etag)
        if body is None:
            body = dumps(agent_list(self.principal, scope=scope))  # rows of LIST_KEYS: see AgentListItemOut
            list_cache.remember_body(key, etag, body)
        if len(body) >= 200 and re_accepts_gzip.search(request.META.get("HTTP_ACCEPT_ENCODING", "")):
            # Compressed once per cached body, not per answer; what fleet.api.gzip would send.
            compressed = list_cache.gzipped_body(key, etag, body)
            response = HttpResponse(with_random_name(compressed, GZipMiddleware.max_random_bytes),
                                    content_type="application/json")
            response["Content-Encoding"] = "gzip"
            patch_vary_headers(response, ("Accept-Encoding",))
            etag = "W/" + etag  # a strong ETag becomes weak once compressed (RFC 9110 8.8.1)
        else:
            response = HttpResponse(body, content_type="application/json")
        response["ETag"] = etag
        return response


def _optional(field_class, **kwargs):
    return field_class(required=False, allow_null=True, **kwargs)


def _given(validated_data: dict) -> dict:
    """The fields the caller actually set: null and empty strings count as absent."""
    return {k: v for k, v in validated_data.items() if v not in (None, "")}


class ScopeCheckedByDeploy(BasePermission):
    """agents:write for a key: checked by agent_deploy on POST (after the body's session-only
    fields), here on every other method, so HEAD and OPTIONS pass no check POST would fail."""

    def has_permission(self, request, view):
        if request.method != "POST":
            require_scope(principal_of(request), Scope.AGENTS_WRITE)
        return True


class AgentDeployApi(ApiView):
    documented_errors = (402,)
    # A key's session-only fields (403 session_required) come before its scope (403
    # missing_scope), so agent_deploy checks both, in that order, once it has the body.
    access = {"POST": (IsAuthenticated, ScopeCheckedByDeploy)}

    class InputSerializer(serializers.Serializer):
        name = _optional(RawStringField)
        runtime_family = _optional(RawStringField)
        deploy_target = _optional(RawStringField)
        execution_target_id = _optional(RawStringField)
        sandbox_profile = _optional(RawStringField)
        sandbox = _optional(RawStringField)
        vcpu = _optional(NumberField)
        ram_mb = _optional(NumberField)
        disk_gb = _optional(NumberField)
        migration_draft_id = _optional(RawStringField)

    @extend_schema(request=InputSerializer, responses={201: AgentDeployOut})
    def post(self, request):
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = _given(body.validated_data)
        agent = agent_deploy(principal=self.principal, request=DeployRequest(**values))
        return Response(AgentDeployOut(agent).data, status=status.HTTP_201_CREATED)


class AgentAdoptApi(ApiView):
    documented_errors = (402,)
    access = {"POST": (RequireScope(Scope.AGENTS_WRITE),)}

    class InputSerializer(serializers.Serializer):
        name = _optional(RawStringField)
        runtime_family = _optional(RawStringField)
        url = _optional(RawStringField)
        host = _optional(RawStringField)
        port = _optional(IntegerField)
        gateway_token = _optional(RawStringField)

    @extend_schema(request=InputSerializer, responses={201: AgentOut})
    def post(self, request):
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = _given(body.validated_data)
        values.setdefault("gateway_token", "")
        agent = agent_adopt(principal=self.principal, request=AdoptRequest(**values))
        return Response(AgentOut(agent).data, status=status.HTTP_201_CREATED)
