"""Input and output shapes of the integration routes (camelCase, as the contract's records)."""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import serializers

from fleet.api.serializers import TimestampField

# ruff: noqa: N815 - the contract's field names


class ProviderFieldOut(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()
    type = serializers.CharField(help_text="text, password, url, select, boolean, integer, list or json")
    required = serializers.BooleanField()
    secret = serializers.BooleanField()
    env = serializers.CharField(allow_null=True, help_text="the environment variable it maps to (null: never sent)")
    default = serializers.JSONField(required=False)
    options = serializers.ListField(child=serializers.CharField(), required=False)
    managed = serializers.CharField(required=False, help_text="'oauth': filled by the authorization")
    help = serializers.CharField(required=False)


class CatalogEntryOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    category = serializers.CharField()
    description = serializers.CharField()
    authType = serializers.CharField(help_text="api_key, oauth2, basic or none")
    configFields = ProviderFieldOut(many=True)
    credentialsUrl = serializers.URLField()
    setupGuide = serializers.CharField()
    mcp = serializers.JSONField(allow_null=True, help_text="the stdio MCP server it can run as, or null")
    test = serializers.JSONField(allow_null=True, help_text="how a connection test calls the provider, or null")
    oauth = serializers.JSONField(required=False, help_text="OAuth 2.0 endpoints, scopes, PKCE, token lifetime")


class ProviderCatalogQuery(serializers.Serializer):
    category = serializers.CharField(required=False, help_text="e.g. developer-tools; unknown: an empty list")


class IntegrationTestOut(serializers.Serializer):
    success = serializers.BooleanField()
    message = serializers.CharField(required=False)
    error = serializers.CharField(required=False)


class IntegrationOut(serializers.Serializer):
    id = serializers.UUIDField()
    provider = serializers.CharField()
    name = serializers.CharField()
    category = serializers.CharField()
    authType = serializers.CharField(source="auth_type")
    status = serializers.CharField(help_text="active, or error after a failed token refresh")
    config = serializers.DictField(help_text="secret fields as [REDACTED]")
    envVars = serializers.ListField(source="env_vars", child=serializers.CharField(), help_text="names only")
    mcpEnabled = serializers.BooleanField(source="mcp_enabled")
    mcpAvailable = serializers.BooleanField(source="mcp_available")
    createdAt = TimestampField(source="created_at")
    lastTestedAt = TimestampField(source="last_tested_at", allow_null=True)
    lastTestResult = IntegrationTestOut(source="last_test_result", allow_null=True)
    tokenExpiresAt = TimestampField(source="token_expires_at", allow_null=True)
    lastError = serializers.CharField(source="last_error")


class IntegrationConnectInput(serializers.Serializer):
    provider = serializers.CharField()
    config = serializers.DictField(required=False, default=dict)
    mcpEnabled = serializers.BooleanField(required=False, default=False)


class IntegrationUpdateInput(serializers.Serializer):
    config = serializers.DictField(required=False)
    mcpEnabled = serializers.BooleanField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Send config, mcpEnabled or both.")
        return attrs


class IntegrationSyncOut(serializers.Serializer):
    success = serializers.BooleanField()
    runtime = serializers.CharField(help_text="openclaw or hermes")
    envVars = serializers.ListField(source="env_vars", child=serializers.CharField(),
                                    help_text="every variable the integrations set now")
    changed = serializers.ListField(child=serializers.CharField(), help_text="variables added or updated")
    removed = serializers.ListField(child=serializers.CharField(), help_text="variables taken out")
    restartRequired = serializers.BooleanField(source="restart_required")


class OAuthStartInput(serializers.Serializer):
    clientId = serializers.CharField(max_length=500)
    clientSecret = serializers.CharField(max_length=500)


class OAuthStartOut(serializers.Serializer):
    authorizeUrl = serializers.CharField(source="authorize_url")
    state = serializers.CharField()


class OAuthCallbackQuery(serializers.Serializer):
    code = serializers.CharField(required=False)
    state = serializers.CharField(required=False)
    error = serializers.CharField(required=False, help_text="the provider's refusal (access_denied)")


@dataclass(frozen=True)
class OAuthResult:
    provider: str
    status: str  # connected | error
    message: str
    integration_id: str | None = None


class OAuthResultOut(serializers.Serializer):
    provider = serializers.CharField()
    status = serializers.ChoiceField(choices=["connected", "error"])
    message = serializers.CharField()
    integrationId = serializers.CharField(source="integration_id", allow_null=True, required=False)


class OAuthResultQuery(serializers.Serializer):
    provider = serializers.CharField(max_length=64, default="")
    status = serializers.ChoiceField(choices=["connected", "error"], default="error")
    message = serializers.CharField(max_length=300, default="", allow_blank=True)
