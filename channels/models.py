"""Channels: the desired config of an OpenClaw agent's runtime-managed channels, Fleet's own
(legacy) channels of Hermes agents, and the messages those carried.

Secret config fields live in `secrets`, one encrypted JSON object (fleet.crypto); `config`
holds the rest in clear.
"""

from __future__ import annotations

import json
import uuid

from django.db import models

from agents.models import Agent
from fleet.crypto import EncryptedTextField

from .config import CheckedConfig


class SecretsMixin(models.Model):
    config = models.JSONField(default=dict, blank=True)
    secrets = EncryptedTextField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def secret_values(self) -> dict:
        if not isinstance(self.secrets, str) or not self.secrets:  # unset, or undecryptable
            return {}
        try:
            return json.loads(self.secrets)
        except ValueError:
            return {}

    @property
    def checked(self) -> CheckedConfig:
        return CheckedConfig(public=dict(self.config or {}), secrets=self.secret_values)

    def store(self, checked: CheckedConfig) -> None:
        self.config = checked.public
        self.secrets = json.dumps(checked.secrets) if checked.secrets else None


class RuntimeChannel(SecretsMixin):
    """The desired state of one runtime-managed channel of an OpenClaw agent (its type is its id)."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="runtime_channels")
    type = models.CharField(max_length=40)
    enabled = models.BooleanField(default=True)
    # When the runtime last took this config (None: never, or changed since).
    applied_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "type"), name="channels_runtime_agent_type_uniq")]
        ordering = ("type",)

    def __str__(self) -> str:
        return f"{self.type} of {self.agent_id}"


class LegacyChannel(SecretsMixin):
    """A channel Fleet runs itself for a Hermes agent (channels.adapters)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="legacy_channels")
    type = models.CharField(max_length=40)
    name = models.CharField(max_length=100)
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("created_at",)
        indexes = [models.Index(fields=("agent", "created_at"), name="channels_legacy_agent_idx")]

    # Secrets the save that returned this instance generated (channels.services.legacy): its
    # answer shows them in clear, once; never a column, never set on a read.
    revealed_secrets: dict[str, str] | None = None

    def __str__(self) -> str:
        return self.name


class Direction(models.TextChoices):
    INBOUND = "inbound"
    OUTBOUND = "outbound"


class MessageState(models.TextChoices):
    PENDING = "pending"  # inbound: waiting for the runtime; outbound: not sent yet
    FORWARDING = "forwarding"  # inbound: claimed by a forwarding task
    ANSWERED = "answered"  # inbound: the runtime replied
    SENT = "sent"  # outbound: the adapter delivered it
    FAILED = "failed"


class ChannelMessage(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    channel = models.ForeignKey(LegacyChannel, on_delete=models.CASCADE, related_name="messages")
    direction = models.CharField(max_length=10, choices=Direction.choices)
    content = models.TextField(blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    sender = models.CharField(max_length=255, blank=True, default="")  # who to answer (chat, channel)
    # The provider's own id of an inbound message (Telegram update_id, Slack event_id,
    # webhook-id): a redelivery of it is the same message.
    provider_update_id = models.CharField(max_length=255, blank=True, default="")
    reply_to = models.OneToOneField("self", null=True, blank=True, on_delete=models.CASCADE, related_name="reply")
    state = models.CharField(max_length=12, choices=MessageState.choices, default=MessageState.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    # When a task last claimed it (state forwarding): a claim older than a chat turn can take is
    # a dead worker's, and another task may take the message over.
    claimed_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ("-created_at",)
        indexes = [models.Index(fields=("channel", "-created_at"), name="channels_msg_channel_idx")]
        constraints = [
            models.UniqueConstraint(fields=("channel", "provider_update_id"), name="channels_msg_update_uniq",
                                    condition=~models.Q(provider_update_id="")),
        ]

    def __str__(self) -> str:
        return f"{self.direction} {self.id}"
