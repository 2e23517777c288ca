"""Kernel models: the fleet event log."""

from __future__ import annotations

import uuid

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
