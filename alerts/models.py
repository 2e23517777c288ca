"""Alert rules, their channels, and the deliveries of matching events to those channels."""

from __future__ import annotations

import json
import uuid

from django.conf import settings
from django.db import models

from fleet.crypto import EncryptedTextField


class ChannelType(models.TextChoices):
    WEBHOOK = "webhook"
    EMAIL = "email"


class AlertRule(models.Model):
    """Deliver the workspace's events whose kind matches `event_pattern` to the rule's channels."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="alert_rules")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    name = models.CharField(max_length=100)
    event_pattern = models.CharField(max_length=100)  # literal kind, "prefix.*" or "*"
    enabled = models.BooleanField(default=True)
    last_fired_at = models.DateTimeField(null=True, blank=True)  # last delivery attempt
    last_error = models.TextField(null=True, blank=True)  # cleared by a successful delivery
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ("created_at", "id")
        # Fan-out looks rules up by workspace, enabled and each pattern matching an event's kind.
        indexes = [models.Index(fields=("workspace", "enabled", "event_pattern"), name="alerts_rule_match")]

    def __str__(self) -> str:
        return f"{self.name} ({self.event_pattern})"


class AlertChannel(models.Model):
    """One destination of a rule. The webhook secret lives here, encrypted, never in `config`."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="channels")
    position = models.PositiveSmallIntegerField()  # order of the rule's `channels` array
    type = models.CharField(max_length=10, choices=ChannelType.choices)
    # webhook: {"url", "headers"}; email: {"to", "subjectPrefix"} - the public fields only.
    config = models.JSONField(default=dict)
    secret = EncryptedTextField(null=True, blank=True)  # webhook signing secret, write-only
    # webhook: the header values as a JSON object, encrypted; config["headers"] names them only.
    header_values = EncryptedTextField(null=True, blank=True)

    class Meta:
        ordering = ("rule", "position")

    def __str__(self) -> str:
        return f"{self.type} #{self.position} of {self.rule_id}"

    @property
    def headers(self) -> dict:
        """The webhook's headers in clear, for delivery only."""
        return json.loads(self.header_values) if self.header_values else {}


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"  # waiting for its next attempt (at next_attempt_at)
    SENDING = "sending"  # claimed by one worker until lease_expires_at
    SUCCEEDED = "succeeded"
    FAILED = "failed"  # permanent failure, or every attempt used


class Delivery(models.Model):
    """One event to one channel of one rule; retried on its own schedule until done."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)  # the webhook-id
    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="deliveries")
    # A channel removed from its rule leaves its deliveries behind as history.
    channel = models.ForeignKey(
        AlertChannel, on_delete=models.SET_NULL, null=True, blank=True, related_name="deliveries"
    )
    event = models.ForeignKey("fleet.Event", on_delete=models.CASCADE, related_name="+")
    channel_type = models.CharField(max_length=10, choices=ChannelType.choices)
    status = models.CharField(max_length=10, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)  # attempts in the current round (resend resets)
    next_attempt_at = models.DateTimeField()
    lease_expires_at = models.DateTimeField(null=True, blank=True)  # while sending
    # When its task message was published (fan-out inserts it as queued and publishes it once
    # the row has committed; a retry, a resend or the sweep publishes it again).
    queued_at = models.DateTimeField(null=True, blank=True)
    # The JSON body, built at the first attempt and kept as text so every retry sends the same bytes.
    body = models.TextField(null=True, blank=True)
    last_error = models.TextField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-created_at",)
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(fields=("event", "channel"), name="alerts_delivery_once_per_channel"),
        ]
        indexes = [
            models.Index(fields=("status", "next_attempt_at")),
        ]

    def __str__(self) -> str:
        return f"{self.channel_type} delivery {self.id} ({self.status})"


class DeliveryAttempt(models.Model):
    """What happened when one attempt of a delivery was made."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempt_log")
    number = models.PositiveSmallIntegerField()  # 1-based within the delivery's current round
    started_at = models.DateTimeField()
    duration_ms = models.PositiveIntegerField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)  # HTTP status of a webhook
    succeeded = models.BooleanField(default=False)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ("started_at", "id")

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery_id}"
