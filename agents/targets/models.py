"""Grants of platform targets, and the Remote Docker hosts."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q

from fleet.api.fields import uuid_or_none
from fleet.crypto import EncryptedTextField

EXECUTION_TARGET_ID_LENGTH = 100  # agents.Agent.execution_target_id


class GranteeKind(models.TextChoices):
    ALL_ACCOUNTS = "all_accounts", "All accounts"
    USER = "user", "User"
    USER_GROUP = "user_group", "User group"
    WORKSPACE = "workspace", "Workspace (editors and above)"


class TargetGrant(models.Model):
    """One grantee of one execution target (`k8s:<id>`, `remote:<id>`, `proxmox`): every
    account, a user, the members of a user group, or the editor-or-above members of a workspace
    (and that workspace's keys with agents:write). A personal Remote Docker host's shares with
    workspaces are workspace grants too: one model for every target (agents.targets.access)."""

    id = models.BigAutoField(primary_key=True)
    execution_target_id = models.CharField(max_length=EXECUTION_TARGET_ID_LENGTH, db_index=True)
    kind = models.CharField(max_length=20, choices=GranteeKind.choices)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True,
                             related_name="target_grants")
    group = models.ForeignKey("accounts.UserGroup", on_delete=models.CASCADE, null=True, blank=True,
                              related_name="target_grants")
    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, null=True, blank=True,
                                  related_name="target_grants")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ("execution_target_id", "kind", "id")
        constraints = [
            # Exactly the grantee its kind names, nothing else.
            models.CheckConstraint(
                name="targets_grant_grantee_matches_kind",
                condition=(
                    Q(kind="all_accounts", user__isnull=True, group__isnull=True, workspace__isnull=True)
                    | Q(kind="user", user__isnull=False, group__isnull=True, workspace__isnull=True)
                    | Q(kind="user_group", user__isnull=True, group__isnull=False, workspace__isnull=True)
                    | Q(kind="workspace", user__isnull=True, group__isnull=True, workspace__isnull=False)
                ),
            ),
            models.UniqueConstraint(fields=("execution_target_id",), condition=Q(kind="all_accounts"),
                                    name="targets_grant_all_accounts_once"),
            models.UniqueConstraint(fields=("execution_target_id", "user"), condition=Q(kind="user"),
                                    name="targets_grant_user_once"),
            models.UniqueConstraint(fields=("execution_target_id", "group"), condition=Q(kind="user_group"),
                                    name="targets_grant_group_once"),
            models.UniqueConstraint(fields=("execution_target_id", "workspace"), condition=Q(kind="workspace"),
                                    name="targets_grant_workspace_once"),
        ]

    def __str__(self) -> str:
        grantee = {"all_accounts": "all accounts", "user": self.user_id, "user_group": self.group_id,
                   "workspace": self.workspace_id}[self.kind]
        return f"{self.execution_target_id} -> {self.kind} {grantee}"


class HostStatus(models.TextChoices):
    UNTESTED = "untested"
    READY = "ready"
    FAILED = "failed"


class AuthType(models.TextChoices):
    KEY = "key"
    PASSWORD = "password"


DEFAULT_DOCKER_SOCKET = "/var/run/docker.sock"


class RemoteHost(models.Model):
    """A Docker engine reached over SSH (`remote:<id>`). Personal (an owner) or a platform host
    (no owner, granted by platform admins). Secrets are encrypted at rest and never answered;
    the SSH host key is pinned by the first successful test (agents.targets.remote_hosts)."""

    KIND = "remote"  # its execution target id is `remote:<id>` (agents.backends.registry's row)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    # PROTECT: a host goes through remote_host_delete (refused while agents use it, its grants
    # dropped), also when its owner is deleted (accounts.deletion).
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True,
                              related_name="remote_hosts", help_text="Empty for a platform host")
    name = models.CharField(max_length=100)
    host = models.CharField(max_length=255)
    port = models.PositiveIntegerField(default=22)
    username = models.CharField(max_length=100)
    auth_type = models.CharField(max_length=10, choices=AuthType.choices)
    private_key = EncryptedTextField(null=True, blank=True)
    passphrase = EncryptedTextField(null=True, blank=True)
    password = EncryptedTextField(null=True, blank=True)
    docker_socket = models.CharField(max_length=255, default=DEFAULT_DOCKER_SOCKET)
    status = models.CharField(max_length=10, choices=HostStatus.choices, default=HostStatus.UNTESTED)
    host_key_fingerprint = models.CharField(max_length=100, blank=True, default="")
    docker_version = models.CharField(max_length=100, blank=True, default="")
    last_error = models.TextField(blank=True, default="")
    last_tested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("-created_at", "id")
        indexes = [models.Index(fields=("owner", "-created_at"), name="targets_host_owner_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.username}@{self.host}:{self.port})"

    @property
    def execution_target_id(self) -> str:
        return f"{self.KIND}:{self.pk}"

    @property
    def is_platform(self) -> bool:
        return self.owner_id is None




def remote_host_of(execution_target_id: str) -> RemoteHost | None:
    """The host `remote:<host-id>` names, or None (any other id, or no such host)."""
    kind, _, concrete = (execution_target_id or "").partition(":")
    host_id = uuid_or_none(concrete) if kind == RemoteHost.KIND else None
    return RemoteHost.objects.filter(pk=host_id).first() if host_id else None


from .k8s_clusters import K8sCluster  # noqa: E402, F401 - the Kubernetes cluster registry
