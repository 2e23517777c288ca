"""An agent's connection to a provider of the catalog, and the state of an OAuth authorization."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from fleet.crypto import EncryptedTextField


class IntegrationStatus(models.TextChoices):
    ACTIVE = "active"  # the contract's status of a saved integration
    ERROR = "error"  # a token refresh failed


class Integration(models.Model):
    """`config` holds the non-secret fields in clear; `secrets` the secret ones, as one JSON
    object encrypted with fleet.crypto (AES-256-GCM). Deleting the row deletes both."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="integrations")
    provider = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=IntegrationStatus.choices, default=IntegrationStatus.ACTIVE)
    config = models.JSONField(default=dict, blank=True)
    secrets = EncryptedTextField(default="{}")
    mcp_enabled = models.BooleanField(default=False)
    token_expires_at = models.DateTimeField(null=True, blank=True)  # OAuth access token
    last_error = models.CharField(max_length=500, blank=True, default="")
    last_tested_at = models.DateTimeField(null=True, blank=True)
    last_test_result = models.JSONField(null=True, blank=True)  # {success, message | error}
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("created_at", "id")
        constraints = [models.UniqueConstraint(fields=("agent", "provider"), name="integration_one_per_provider")]
        indexes = [models.Index(fields=("status", "token_expires_at"), name="integration_refresh_due")]

    def __str__(self) -> str:
        return f"{self.provider} on {self.agent_id}"


class OAuthState(models.Model):
    """One authorization in flight: single use, bound to the user and agent that started it.
    Only the state's SHA-256 digest is stored; the PKCE verifier and client secret are encrypted."""

    id = models.BigAutoField(primary_key=True)
    state_digest = models.CharField(max_length=64, unique=True)
    provider = models.CharField(max_length=64)
    agent = models.ForeignKey("agents.Agent", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    client_id = models.CharField(max_length=500)
    client_secret = EncryptedTextField()
    code_verifier = EncryptedTextField(null=True, blank=True)
    redirect_uri = models.CharField(max_length=500)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.provider} authorization for {self.agent_id}"  # never the state itself
