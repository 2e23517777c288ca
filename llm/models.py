"""A model provider's key, owned by one user or by one workspace (never both)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from fleet.crypto import EncryptedTextField


class ProviderKey(models.Model):
    """`api_key` is encrypted with fleet.crypto (AES-256-GCM) and never shown back: reads say
    [REDACTED]. `base_url` overrides the provider's (required for openai-compatible)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE,
                             related_name="llm_keys")
    workspace = models.ForeignKey("workspaces.Workspace", null=True, blank=True, on_delete=models.CASCADE,
                                  related_name="llm_keys")
    provider = models.CharField(max_length=40)
    label = models.CharField(max_length=100)
    api_key = EncryptedTextField(blank=True, default="")
    base_url = models.CharField(max_length=500, blank=True, default="")
    last_tested_at = models.DateTimeField(null=True, blank=True)
    last_test_result = models.JSONField(null=True, blank=True)  # {ok, models} or {ok, error}
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("created_at", "id")
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False, workspace__isnull=True)
                           | Q(user__isnull=True, workspace__isnull=False)),
                name="llm_key_one_owner",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.provider} key '{self.label}'"  # never the key itself
