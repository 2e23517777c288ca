"""Integration routes: thin views over integrations.services and integrations.selectors.

Agent routes use agents.permissions: viewers read, editors write; keys need agents:read to read
and agents:write to write, and reach only agents of their workspace (others are 404).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from agents.permissions import AgentOperator, AgentReader
from fleet.api.permissions import IsAuthenticated
from fleet.api.serializers import SuccessOut
from fleet.api.views import PUBLIC, ApiView, PublicApiView

from . import catalog, selectors, services
from .serializers import (
    CatalogEntryOut,
    IntegrationConnectInput,
    IntegrationOut,
    IntegrationSyncOut,
    IntegrationTestOut,
    IntegrationUpdateInput,
    OAuthCallbackQuery,
    OAuthResult,
    OAuthResultOut,
    OAuthResultQuery,
    OAuthStartInput,
    OAuthStartOut,
    ProviderCatalogQuery,
)

RESULT_PATH = "/api/integrations/oauth/result"


def _valid(serializer_class, data) -> dict:
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def _record(integration) -> dict:
    return IntegrationOut(selectors.integration_record(integration)).data


class CatalogApi(ApiView):
    access = {"GET": (IsAuthenticated,)}

    @extend_schema(summary="The providers that can be connected", parameters=[ProviderCatalogQuery],
                   responses=CatalogEntryOut(many=True))
    def get(self, request):
        query = _valid(ProviderCatalogQuery, request.query_params)
        return Response(CatalogEntryOut(catalog.providers(query.get("category")), many=True).data)


class AgentIntegrationsApi(ApiView):
    request_examples = {
        "POST": {
            "GitHub with a token": {
                "provider": "github", "config": {"token": "<personal access token>"}, "mcpEnabled": True,
            },
        },
    }
    documented_errors = {"POST": (409, 502)}
    access = {"GET": (AgentReader,), "POST": (AgentOperator,)}

    @extend_schema(summary="The agent's integrations (secrets [REDACTED])", responses=IntegrationOut(many=True))
    def get(self, request, agent_id):
        integrations = selectors.integrations_of_agent(agent=request.agent_access.agent)
        return Response([_record(i) for i in integrations])

    @extend_schema(summary="Connect a provider (credentials encrypted, status active)", request=IntegrationConnectInput,
                   responses={201: IntegrationOut})
    def post(self, request, agent_id):
        body = _valid(IntegrationConnectInput, request.data)
        integration = services.integration_connect(
            agent=request.agent_access.agent, provider=body["provider"], config=body["config"],
            user=self.principal.user, mcp_enabled=body["mcpEnabled"],
        )
        return Response(_record(integration), status=status.HTTP_201_CREATED)


class AgentIntegrationDetailApi(ApiView):
    request_examples = {
        "PATCH": {
            "Rotate the token": {"config": {"token": "<the new token>"}},
        },
    }
    documented_errors = (409, 502)
    access = {"PATCH": (AgentOperator,), "DELETE": (AgentOperator,)}

    @extend_schema(summary="Change fields ([REDACTED] keeps a secret) or turn the MCP server on or off",
                   request=IntegrationUpdateInput, responses=IntegrationOut)
    def patch(self, request, agent_id, integration_id):
        integration = selectors.integration_of_agent(agent=request.agent_access.agent, integration_id=integration_id)
        body = _valid(IntegrationUpdateInput, request.data)
        integration = services.integration_update(integration=integration, config=body.get("config"),
                                                  mcp_enabled=body.get("mcpEnabled"))
        return Response(_record(integration))

    @extend_schema(summary="Remove it: credentials deleted, the agent is not restarted", responses={200: SuccessOut})
    def delete(self, request, agent_id, integration_id):
        integration = selectors.integration_of_agent(agent=request.agent_access.agent, integration_id=integration_id)
        services.integration_remove(integration=integration)
        return Response(SuccessOut({"success": True}).data)


class AgentIntegrationTestApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Call the provider's API with the stored credentials", request=None,
                   responses=IntegrationTestOut)
    def post(self, request, agent_id, integration_id):
        integration = selectors.integration_of_agent(agent=request.agent_access.agent, integration_id=integration_id)
        return Response(IntegrationTestOut(services.integration_test(integration=integration).as_dict()).data)


class AgentIntegrationSyncApi(ApiView):
    documented_errors = (409, 502)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Push the variables to the running agent, and say what changed", request=None,
                   responses=IntegrationSyncOut)
    def post(self, request, agent_id):
        result = services.integration_sync(agent=request.agent_access.agent)
        return Response(IntegrationSyncOut(result).data)


class OAuthStartApi(ApiView):
    request_examples = {
        "POST": {
            "Your OAuth app's client": {"clientId": "<client id>", "clientSecret": "<client secret>"},
        },
    }
    documented_errors = (409,)
    access = {"POST": (AgentOperator,)}

    @extend_schema(summary="Start an OAuth 2.0 authorization (X with PKCE, LinkedIn)", request=OAuthStartInput,
                   responses=OAuthStartOut)
    def post(self, request, agent_id, provider):
        body = _valid(OAuthStartInput, request.data)
        authorization = services.oauth_start(
            agent=request.agent_access.agent, user=self.principal.user, provider=provider,
            client_id=body["clientId"], client_secret=body["clientSecret"],
            request_base=request.build_absolute_uri("/"),
        )
        return Response(OAuthStartOut(authorization).data)


class OAuthCallbackApi(PublicApiView):
    access = {"GET": PUBLIC}

    @extend_schema(
        summary="The provider's redirect: exchanges the code. A browser is redirected (302) to the result "
                "page; a client sending Accept: application/json gets the result itself",
        parameters=[OAuthCallbackQuery],
        responses={200: OAuthResultOut, 302: OpenApiResponse(description="to /api/integrations/oauth/result")},
    )
    def get(self, request, provider):
        query = _valid(OAuthCallbackQuery, request.query_params)
        if query.get("error"):
            result = OAuthResult(provider, "error", f"The provider refused the authorization: {query['error'][:100]}")
        else:
            integration = services.oauth_complete(provider=provider, code=query.get("code"), state=query.get("state"))
            record = selectors.integration_record(integration)
            result = OAuthResult(provider, "connected", f"{record.name} is connected.", str(record.id))
        if "application/json" in request.headers.get("Accept", ""):
            return Response(OAuthResultOut(result).data)
        response = HttpResponse(status=302)
        query = {"provider": provider, "status": result.status, "message": result.message}
        response["Location"] = f"{RESULT_PATH}?{urlencode(query)}"
        return response


class OAuthResultApi(PublicApiView):
    access = {"GET": PUBLIC}

    @extend_schema(summary="Where the browser lands after an authorization: how it ended",
                   parameters=[OAuthResultQuery], responses=OAuthResultOut)
    def get(self, request):
        query = _valid(OAuthResultQuery, request.query_params)
        return Response(OAuthResultOut(OAuthResult(query["provider"], query["status"], query["message"])).data)
