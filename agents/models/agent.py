"""The Agent: one runtime (OpenClaw or Hermes) and where and how it runs."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from fleet.crypto import EncryptedTextField


class Status(models.TextChoices):
    QUEUED = "queued"
    DEPLOYING = "deploying"
    RUNNING = "running"
    WARNING = "warning"
    ERROR = "error"
    STOPPED = "stopped"


class ModelRouting(models.TextChoices):
    """Where the runtime sends its model calls: to the provider with the key in the container
    (`direct`), or to Fleet's model gateway with its own agent token (`gateway`: the key stays in
    Fleet, every token is metered, hard caps refuse a call before it is made)."""

    DIRECT = "direct"
    GATEWAY = "gateway"


# The statuses in which the runtime serves (its gateway answers): monitored, sampled, pulled,
# paused by budgets, talked to. One name for one rule.
SERVING = (Status.RUNNING, Status.WARNING)
# A deploy in flight: the workload may not exist yet (`deploying`: being created or starting).
IN_FLIGHT = (Status.QUEUED, Status.DEPLOYING)


class RuntimeFamily(models.TextChoices):
    OPENCLAW = "openclaw"
    HERMES = "hermes"


class DeployTarget(models.TextChoices):
    DOCKER = "docker"
    K8S = "k8s"
    REMOTE_DOCKER = "remote-docker"
    PROXMOX = "proxmox"
    EXTERNAL = "external"  # adopted runtimes: no compute is provisioned


class SandboxProfile(models.TextChoices):
    STANDARD = "standard"
    NEMOCLAW = "nemoclaw"


class PausedReason(models.TextChoices):
    BUDGET_EXCEEDED = "budget_exceeded"


class Agent(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    # PROTECT: a user is deleted after their agents (accounts.deletion), whose delete removes the
    # workload; a cascade would drop the row and strand the container.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="agents")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    runtime_family = models.CharField(max_length=20, choices=RuntimeFamily.choices, default=RuntimeFamily.OPENCLAW)
    deploy_target = models.CharField(max_length=20, choices=DeployTarget.choices, default=DeployTarget.DOCKER)
    execution_target_id = models.CharField(max_length=100, default="docker")
    sandbox_profile = models.CharField(max_length=20, choices=SandboxProfile.choices, default=SandboxProfile.STANDARD)
    vcpu = models.FloatField(default=1)
    ram_mb = models.PositiveIntegerField(default=1024)
    disk_gb = models.PositiveIntegerField(default=10)
    node = models.CharField(max_length=255, blank=True, default="")
    container_id = models.CharField(max_length=255, blank=True, default="")
    container_name = models.CharField(max_length=255, blank=True, default="")
    gateway_host_port = models.PositiveIntegerField(null=True, blank=True)
    # Adopted runtimes: where their gateway listens (provisioned ones resolve it via the backend).
    gateway_url = models.CharField(max_length=2048, blank=True, default="")
    gateway_token = EncryptedTextField(null=True, blank=True)
    # HMAC-SHA256 of the usage ingest token; the raw token only ever goes into the workload.
    usage_token_digest = models.CharField(max_length=64, blank=True, default="")
    model_routing = models.CharField(max_length=10, choices=ModelRouting.choices, default=ModelRouting.DIRECT)
    is_external = models.BooleanField(default=False)
    paused_reason = models.CharField(max_length=30, choices=PausedReason.choices, null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    # What the runtime said at the first successful handshake (the contract is rechecked
    # when the runtime connects); readiness_failures counts consecutive failed readiness checks.
    runtime_version = models.CharField(max_length=50, blank=True, default="")
    last_handshake_at = models.DateTimeField(null=True, blank=True)
    readiness_failures = models.PositiveSmallIntegerField(default=0)
    # What the engine last said about restarts of the workload it restarts by itself (restart
    # policy, a pod's container): how many, and whether the last end was an OOM kill. The
    # monitoring sweep stores them and warns once per new restart (agents.services.monitoring).
    restart_count = models.PositiveIntegerField(default=0)
    oom_killed = models.BooleanField(default=False)
    # The deploy's record of pending work (docs/reliability.md): when the reconciler takes over a `queued`
    # or `deploying` agent whose job has given no news, the job that owns the deploy (a takeover
    # publishes a new one; any other job finding it `deploying` steps aside), and how many
    # takeovers it has had.
    provision_deadline_at = models.DateTimeField(null=True, blank=True)
    provision_job_id = models.CharField(max_length=64, blank=True, default="")
    provision_takeovers = models.PositiveSmallIntegerField(default=0)
    # When a starting workload must be ready (AGENT_READY_TIMEOUT_SECONDS after it was created):
    # the readiness checks are separate tasks, so the deadline outlives any one of them.
    ready_deadline_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Moved by database triggers whenever this agent's row of GET /agents may read differently
    # (agents.list_revisions); each web process keeps the row's JSON under it (agents.list_rows).
    # Never set by the ORM: a save carrying an older value keeps the stored one.
    list_revision = models.BigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ("-created_at",)
        indexes = [
            models.Index(fields=("owner", "-created_at"), name="agents_owner_created_idx"),
            models.Index(fields=("status",), name="agents_status_idx"),
            # The model gateway finds the agent by its token's digest alone.
            models.Index(fields=("usage_token_digest",), name="agents_usage_token_idx"),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def metered_at_gateway(self) -> bool:
        """Its model calls are counted one by one by Fleet's model gateway: what its runtime
        reports of them (pulled figures, a chat turn's usage) is never added again."""
        return self.model_routing == ModelRouting.GATEWAY

    @property
    def sandbox_type(self) -> str:
        """The spec's `sandbox_type` mirrors the resolved profile."""
        return self.sandbox_profile

    @property
    def has_container(self) -> bool:
        return bool(self.container_id)
