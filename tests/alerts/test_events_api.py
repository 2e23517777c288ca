from datetime import timedelta

import pytest
from django.utils import timezone

from fleet.models import Event
from tests.support import client_for

pytestmark = pytest.mark.django_db


def event(kind, *workspaces, minutes_ago=0, **extra):
    return Event.objects.create(
        kind=kind,
        workspace_ids=[str(w.id) for w in workspaces],
        occurred_at=timezone.now() - timedelta(minutes=minutes_ago),
        **extra,
    )


def events_url(workspace, query="") -> str:
    return f"/api/workspaces/{workspace.id}/events{query}"


def test_a_viewer_lists_the_workspaces_events_newest_first(tenancy):
    old = event("agent.started", tenancy.workspace, minutes_ago=10, message="started")
    shared = event("agent.error", tenancy.workspace, tenancy.other_workspace, minutes_ago=5,
                   agent_id="6f1c8e8e-0000-4000-8000-000000000001", data={"code": 137})
    event("agent.stopped", tenancy.other_workspace, minutes_ago=1)
    event("agent.queued", minutes_ago=0)  # no workspace at all

    response = client_for(tenancy.viewer).get(events_url(tenancy.workspace))

    assert response.status_code == 200
    body = response.json()
    assert [e["id"] for e in body] == [str(shared.id), str(old.id)]
    assert body[0] == {
        "id": str(shared.id),
        "type": "agent.error",
        "occurredAt": shared.occurred_at.isoformat().replace("+00:00", "Z"),
        "agentId": "6f1c8e8e-0000-4000-8000-000000000001",
        "message": "",
        "data": {"code": 137},
        "test": False,
        "actor": "",  # emitted by Fleet itself, not by a request
    }
    assert body[1]["agentId"] is None and body[1]["message"] == "started"


def test_the_limit_defaults_to_50(tenancy):
    for i in range(55):
        event("agent.warning", tenancy.workspace, minutes_ago=i)

    response = client_for(tenancy.viewer).get(events_url(tenancy.workspace))

    assert len(response.json()) == 50


def test_the_limit_is_honoured_up_to_100(tenancy):
    for i in range(105):
        event("agent.warning", tenancy.workspace, minutes_ago=i)

    assert len(client_for(tenancy.viewer).get(events_url(tenancy.workspace, "?limit=3")).json()) == 3
    assert len(client_for(tenancy.viewer).get(events_url(tenancy.workspace, "?limit=100")).json()) == 100


@pytest.mark.parametrize("limit", ["0", "101", "-1", "ten", "1.5"])
def test_a_limit_outside_1_to_100_is_a_400_naming_limit(tenancy, limit):
    response = client_for(tenancy.viewer).get(events_url(tenancy.workspace, f"?limit={limit}"))

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert "limit" in response.json()["fields"]
