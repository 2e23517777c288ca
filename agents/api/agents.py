"""GET /agents, POST /agents/deploy, POST /agents/adopt."""

from __future__ import annotations

import json

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotModified
from django.middleware.gzip import re_accepts_gzip
from django.utils.cache import patch_vary_headers
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response

from fleet.api.fields import IntegerField, NumberField, RawStringField, StrippedNameField
from fleet.api.gzip import GZipMiddleware, with_random_name
from fleet.api.permissions import IsAuthenticated, RequireScope, principal_of, require_scope
from fleet.api.renderers import dumps
from fleet.api.serializers import valid_part
from fleet.api.throttling import throttle
from fleet.api.views import ApiView
from fleet.errors import Conflict, FieldErrors, FleetError
from workspaces.roles import Scope

from .. import list_cache
from ..list_rows import list_body
from ..llm_model.choice import routing_parse
from ..llm_model.serializers import ModelIn
from ..llm_model.services import deploy_model_check
from ..services.adopt import AdoptRequest, agent_adopt
from ..services.deploy import agent_deploy
from ..services.idempotency import HEADER as IDEMPOTENCY_HEADER
from ..services.idempotency import (
    IdempotencyKeyTaken,
    deploy_key_answer_store,
    deploy_key_of,
    deploy_replay_find,
)
from ..services.selection import DeployRequest, deploy_plan_resolve, resource_adjustments
from .serializers import AgentDeployOut, AgentListItemOut, AgentOut

LIST_SCOPES = ("accessible", "owned")
LIST_FORMAT = list_cache.list_format(AgentListItemOut)  # part of every list ETag


class AgentListApi(ApiView):
    access = {"GET": (RequireScope(Scope.AGENTS_READ),)}

    class FilterSerializer(serializers.Serializer):
        scope = serializers.ChoiceField(choices=LIST_SCOPES, required=False, default="accessible")

    @extend_schema(parameters=[FilterSerializer], responses=AgentListItemOut(many=True))
    def get(self, request):
        """The agents the caller may see, newest first."""
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
            body = list_body(self.principal, scope=scope)  # rows of LIST_KEYS: see AgentListItemOut
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
    documented_errors = (402, 409, 429, 503)
    # A key's session-only fields (403 session_required) come before its scope (403
    # missing_scope), so agent_deploy checks both, in that order, once it has the body.
    access = {"POST": (IsAuthenticated, ScopeCheckedByDeploy)}

    class InputSerializer(serializers.Serializer):
        name = _optional(StrippedNameField, help_text="at most 100 characters, control characters (NUL "
                         "included) and bidi controls removed; empty: <runtime_family>-agent-<6 hex>")
        runtime_family = _optional(RawStringField, help_text="openclaw or hermes; default DEFAULT_RUNTIME_FAMILY")
        deploy_target = _optional(RawStringField, help_text="docker, k8s, remote-docker or proxmox; default "
                                  "DEFAULT_DEPLOY_TARGET (or the family of execution_target_id)")
        execution_target_id = _optional(RawStringField, help_text="docker, k8s:<cluster-id>, remote:<host-id> "
                                        "or proxmox")
        sandbox_profile = _optional(RawStringField, help_text="standard (default) or nemoclaw (openclaw only, "
                                    "when enabled)")
        sandbox = _optional(RawStringField, help_text="legacy alias of sandbox_profile")
        vcpu = _optional(NumberField, help_text="default DEFAULT_VCPU; clamped to 0.25..MAX_VCPU")
        ram_mb = _optional(NumberField, help_text="default DEFAULT_RAM_MB; clamped to 512..MAX_RAM_MB")
        disk_gb = _optional(NumberField, help_text="default DEFAULT_DISK_GB; clamped to 1..MAX_DISK_GB")
        migration_draft_id = _optional(RawStringField, help_text="a draft of POST /agent-migrations (session only)")
        model = ModelIn(required=False, allow_null=True, help_text="the model the agent answers with (a saved "
                        "provider key and a model name); absent: DEFAULT_LLM_KEY and DEFAULT_LLM_MODEL, if set")
        modelRouting = _optional(RawStringField, source="model_routing", help_text="where the runtime sends its "  # noqa: N815
                                 "model calls: direct (to the provider) or gateway (through Fleet's /llm/v1, the "
                                 "key kept out of the container); default DEFAULT_MODEL_ROUTING")

    @extend_schema(
        request=InputSerializer,
        responses={201: AgentDeployOut},
        examples=[
            OpenApiExample("OpenClaw with 2 GB", value={"name": "support-bot", "runtime_family": "openclaw",
                                                        "ram_mb": 2048}, request_only=True),
            OpenApiExample("Hermes on a Kubernetes cluster", request_only=True, value={
                "name": "researcher", "runtime_family": "hermes", "execution_target_id": "k8s:<cluster-id>"}),
            OpenApiExample("An agent that answers with a saved key's model", request_only=True, value={
                "name": "helper", "model": {"keyId": "<id of a saved provider key>", "name": "gpt-4o-mini"}}),
        ],
        parameters=[OpenApiParameter(
            IDEMPOTENCY_HEADER, str, OpenApiParameter.HEADER, required=False,
            description="1 to 255 visible ASCII characters. The same key from the same caller within "
                        "IDEMPOTENCY_KEY_TTL_HOURS (24 h) answers the first deploy's status and body (with "
                        "`Idempotent-Replayed: true`) instead of making a second agent; with another body, "
                        "409 idempotency_key_reused.",
        )],
    )
    def post(self, request):
        """Deploy a new agent (queued now, provisioned by a worker)."""
        throttle("deploy_user", self.principal.user.pk, settings.DEPLOY_RATE_PER_USER, when_cache_away="serve")
        body = self.InputSerializer(data=request.data)
        if not body.is_valid():
            self._refuse_with_every_bad_field(body)
        values = _given(body.validated_data)
        deploy_key = deploy_key_of(principal=self.principal, header=request.headers.get(IDEMPOTENCY_HEADER),
                                   body=values)
        replay = deploy_key and deploy_replay_find(principal=self.principal, deploy_key=deploy_key)
        if replay:
            return _replayed(replay)
        try:
            agent = agent_deploy(principal=self.principal, request=DeployRequest(**values), deploy_key=deploy_key)
        except IdempotencyKeyTaken:  # the same key, racing: the first request's agent
            replay = deploy_replay_find(principal=self.principal, deploy_key=deploy_key)
            if replay is None:
                raise Conflict("A deploy with this Idempotency-Key is in progress; try again.") from None
            return _replayed(replay)
        out = AgentDeployOut(agent, context={"adjusted": resource_adjustments(DeployRequest(**values), agent)}).data
        if deploy_key is not None:
            deploy_key_answer_store(deploy_key=deploy_key, status_code=status.HTTP_201_CREATED,
                                    body=json.loads(dumps(out)))  # as sent: timestamps as their strings
        return Response(out, status=status.HTTP_201_CREATED)

    def _refuse_with_every_bad_field(self, body) -> None:
        """400 naming the fields of wrong type and, among the others, those the deploy rules
        refuse (family, placement, profile, resources): every bad field at once."""
        errors = FieldErrors(body.errors)
        given = _given(valid_part(body))
        checks = [lambda: deploy_plan_resolve(principal=self.principal, request=DeployRequest(**given))]
        if "model" in given:
            checks.append(lambda: deploy_model_check(given["model"], principal=self.principal))
        if "model_routing" in given:
            checks.append(lambda: routing_parse(given["model_routing"]))
        for check in checks:
            try:
                errors.check(check)
            except FleetError:  # a refusal that is not about a field (a key's session-only field): the body's 400 first
                pass
        errors.raise_any()


def _replayed(replay) -> Response:
    """The first answer to an Idempotency-Key (its agent as it is now, if the body was never sent)."""
    body = replay.body if replay.body is not None else AgentDeployOut(replay.agent).data
    return Response(body, status=replay.status_code, headers={"Idempotent-Replayed": "true"})


class AgentAdoptApi(ApiView):
    documented_errors = (402,)
    access = {"POST": (RequireScope(Scope.AGENTS_WRITE),)}

    class InputSerializer(serializers.Serializer):
        name = _optional(StrippedNameField)
        runtime_family = _optional(RawStringField, help_text="openclaw or hermes")
        url = _optional(RawStringField, help_text="the runtime's gateway URL (or host and port)")
        host = _optional(RawStringField)
        port = _optional(IntegerField)
        gateway_token = _optional(RawStringField, help_text="at least 32 random characters, no whitespace; "
                                  "stored encrypted")

    @extend_schema(request=InputSerializer, responses={201: AgentOut}, examples=[
        OpenApiExample("An OpenClaw on another host", request_only=True, value={
            "name": "lab-agent", "runtime_family": "openclaw", "url": "http://10.0.0.7:18789",
            "gateway_token": "<at least 32 random characters>"}),
    ])
    def post(self, request):
        """Register a runtime that already runs elsewhere, without provisioning."""
        body = self.InputSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        values = _given(body.validated_data)
        values.setdefault("gateway_token", "")
        agent = agent_adopt(principal=self.principal, request=AdoptRequest(**values))
        return Response(AgentOut(agent).data, status=status.HTTP_201_CREATED)
