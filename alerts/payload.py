"""The body of a delivery (DESIGN.md section 4), the same for webhooks and emails:

{"id", "type", "occurredAt", "workspace": {id, name}, "agent": {id, name, status} | null,
 "message", "data", "rule": {id, name}, "test"}

"id" is the event's id (the same in every delivery of one event and in the events listing);
the webhook-id header carries the delivery's own id.
"""

from __future__ import annotations

import json

from django.apps import apps

from fleet.models import Event

from .models import AlertRule


def delivery_payload(*, event: Event, rule: AlertRule) -> dict:
    return {
        "id": str(event.id),
        "type": event.kind,
        "occurredAt": event.occurred_at.isoformat().replace("+00:00", "Z"),
        "workspace": {"id": str(rule.workspace_id), "name": rule.workspace.name},
        "agent": _agent_summary(event),
        "message": event.message,
        "data": event.data,
        "rule": {"id": str(rule.id), "name": rule.name},
        "test": event.test,
    }


def payload_json(payload: dict) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def _agent_summary(event: Event) -> dict | None:
    """The agent as it is now; named by app label because alerts must not import agents."""
    if event.agent_id is None:
        return None
    try:
        agent_model = apps.get_model("agents", "Agent")
    except LookupError:
        agent_model = None
    row = None
    if agent_model is not None:
        row = agent_model.objects.filter(pk=event.agent_id).values("name", "status").first()
    if row is None:  # e.g. agent.deleted: fall back to what the event carried
        data = event.data if isinstance(event.data, dict) else {}
        row = {"name": data.get("agent_name"), "status": data.get("agent_status")}
    return {"id": str(event.agent_id), "name": row["name"], "status": row["status"]}
