"""Workspaces, memberships with roles, invitations, and workspace API keys."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from .roles import Role


class Workspace(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_workspaces")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("-created_at",)

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices())
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("workspace", "user"), name="workspaces_membership_unique"),
            # The creator is the one owner; `owner` is never granted to anyone else.
            models.UniqueConstraint(
                fields=("workspace",), condition=models.Q(role="owner"), name="workspaces_membership_one_owner"
            ),
        ]
        indexes = [models.Index(fields=("user", "workspace"))]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} as {self.role}"

    @property
    def rank(self) -> Role:
        return Role.parse(self.role)


class Invitation(models.Model):
    """An offer of a role in a workspace to an email address, pending until the account with that
    email accepts it. Adding a member is inviting one, so the answer is the same whether the
    address has an account (member add was an oracle of registered emails)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.CharField(max_length=255)  # trimmed and lower-cased: one invitation per address
    role = models.CharField(max_length=10, choices=Role.choices())
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=("workspace", "email"), name="workspaces_invitation_unique")]
        indexes = [models.Index(fields=("email",), name="workspaces_invitation_email")]
        ordering = ("created_at",)

    def __str__(self) -> str:
        return f"{self.email} to {self.workspace} as {self.role}"

    @property
    def rank(self) -> Role:
        return Role.parse(self.role)


class ApiKey(models.Model):
    """A workspace-scoped key: shown once, stored as an HMAC-SHA256 digest."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="api_keys")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    scopes = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None
