"""`backup.failed` and `backup.completed` reach alert rules like any event: by kind, and by the
`backup.*` glob, in the agent's workspaces (the backups app never imports alerts)."""

from __future__ import annotations

import pytest

from alerts.models import Delivery
from backups.services import backup_request
from fleet.models import Event
from tests.factories.alerts import fan_out, make_rule

pytestmark = pytest.mark.django_db

EMAIL = {"type": "email", "to": ["ops@example.com"]}


def test_an_alert_rule_for_backup_failed_gets_a_scheduled_backup_that_failed(tenancy):
    client = tenancy.client("admin")
    for pattern in ("backup.failed", "backup.*"):
        made = client.post(f"/api/workspaces/{tenancy.workspace.id}/alert-rules",
                           {"name": pattern, "eventPattern": pattern, "channels": [EMAIL]}, format="json")
        assert made.status_code == 200, made.json()
    make_rule(workspace=tenancy.workspace, channels=[EMAIL], pattern="backup.completed", name="done")
    agent = tenancy.agent()  # no workload: its scheduled backup fails at once

    backup_request(agent=agent, trigger="schedule")
    fan_out()

    [event] = Event.objects.filter(kind="backup.failed")
    assert event.workspace_ids == [str(tenancy.workspace.id)] and event.data["willRetry"] is False
    assert sorted(Delivery.objects.filter(event=event).values_list("rule__event_pattern", flat=True)) == [
        "backup.*", "backup.failed"]
