"""The body of a delivery, the same for webhooks and emails:

{"id", "type", "occurredAt", "workspace": {id, name}, "agent": {id, name, status} | null,
 "message", "data", "rule": {id, name}, "test"}

"id" is the event's id (the same in every delivery of one event and in the events listing);
the webhook-id header carries the delivery's own id.
"""

from __future__ import annotations

import json

from fleet.events import event_agent
from fleet.models import Event

from .models import AlertRule


def delivery_payload(*, event: Event, rule: AlertRule) -> dict:
    return {
        "id": str(event.id),
        "type": event.kind,
        "occurredAt": event.occurred_at.isoformat().replace("+00:00", "Z"),
        "workspace": {"id": str(rule.workspace_id), "name": rule.workspace.name},
        "agent": event_agent(event),
        "message": event.message,
        "data": event.data,
        "rule": {"id": str(rule.id), "name": rule.name},
        "test": event.test,
    }


def payload_json(payload: dict) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
