"""Kernel models: the fleet event log."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models


class Event(models.Model):
    """Something that happened in the fleet; alert rules are matched against these."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=100, db_index=True)  # dot-named, e.g. agent.error
    workspace_ids = models.JSONField(default=list, blank=True)  # workspaces the event belongs to
    agent_id = models.UUIDField(null=True, blank=True, db_index=True)
    message = models.TextField(blank=True)
    data = models.JSONField(default=dict, blank=True)
    test = models.BooleanField(default=False)  # a synthetic event from an alert-rule test
    # Who caused it (fleet.actors): a user's e-mail, "(API key)" after it for a key; "" for Fleet itself.
    actor = models.CharField(max_length=300, blank=True, default="")
    occurred_at = models.DateTimeField(db_index=True)
    # When alert matching took the event (alerts.services.fanout: a dispatch after the emitter's
    # commit, or the minute sweep); null while it waits. Only the waiting events are indexed.
    fanned_out_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ("-occurred_at",)
        indexes = [
            models.Index(
                fields=("occurred_at",), condition=models.Q(fanned_out_at__isnull=True), name="fleet_event_to_fan_out"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} at {self.occurred_at:%Y-%m-%d %H:%M:%S}"


class StreamLease(models.Model):
    """A live stream a web process holds open for a user: a followed log, a chat turn, a
    terminal, a relayed WebSocket (fleet.edge.streams). Counting a user's live leases caps what
    one user may hold across every process; a process renews its own leases while it holds them,
    so those of a process that died lapse by themselves."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=20)  # a family of streams with its own per-user cap
    holder = models.CharField(max_length=80)  # the web process holding it (host:pid:start)
    opened_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=("user", "kind", "expires_at"), name="fleet_stream_live")]

    def __str__(self) -> str:
        return f"{self.kind} stream of {self.user_id} until {self.expires_at:%H:%M:%S}"
