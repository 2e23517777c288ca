"""GET /api/audit (platform admins) and GET /api/workspaces/:id/audit (that workspace's admins):
filters, cursor pages, the streamed exports, and everyone else refused."""

import csv
import io
import json
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from audit.actors import Actor
from audit.models import AuditEntry
from audit.services import audit_record
from tests.factories.agents import WorkspaceAgentFactory
from tests.support import client_for

pytestmark = pytest.mark.django_db


def row(action="agent.update", *, workspace=None, user=None, minutes_ago=0, **fields):
    entry = audit_record(action=action, source="api", actor=Actor(user=user, label=getattr(user, "email", "")),
                         workspace_id=workspace.id if workspace else None, **fields)
    AuditEntry.objects.filter(pk=entry.pk).update(at=timezone.now() - timedelta(minutes=minutes_ago))
    return AuditEntry.objects.get(pk=entry.pk)


def ws_url(tenancy, query=""):
    return f"/api/workspaces/{tenancy.workspace.id}/audit{query}"


def ids(response):
    return [item["id"] for item in response.json()["items"]]


def test_a_platform_admin_reads_every_row_newest_first(tenancy):
    old = row(workspace=tenancy.workspace, user=tenancy.admin, minutes_ago=5, target_type="agent", target_id="a1",
              detail=["name"])
    new = row("auth.login", result="invalid_credentials")

    response = client_for(tenancy.platform_admin).get("/api/audit")

    assert response.status_code == 200
    body = response.json()
    assert ids(response) == [new.id, old.id] and body["nextCursor"] is None
    assert body["items"][1] | {"at": None} == {
        "id": old.id, "at": None, "actor": tenancy.admin.email, "actorUserId": str(tenancy.admin.id),
        "actorKeyId": None, "actorIp": None, "source": "api", "action": "agent.update", "targetType": "agent",
        "targetId": "a1", "workspaceId": str(tenancy.workspace.id), "result": "ok", "detail": ["name"],
    }


def test_a_workspace_admin_reads_only_their_workspaces_rows(tenancy):
    mine = row(workspace=tenancy.workspace)
    row(workspace=tenancy.other_workspace)
    row()

    response = client_for(tenancy.admin).get(ws_url(tenancy))

    assert response.status_code == 200 and ids(response) == [mine.id]


@pytest.mark.parametrize(("caller", "status", "code"), [
    ("anonymous", 401, "not_authenticated"),
    ("editor", 403, "permission_denied"),
    ("outsider", 404, "not_found"),
    ("key:agents:read,agents:write,workspaces:read", 403, "session_required"),
])
def test_the_workspace_log_refuses_everyone_else(tenancy, caller, status, code):
    response = tenancy.client(caller).get(ws_url(tenancy))

    assert response.status_code == status
    assert response.json()["code"] == code and set(response.json()) >= {"error", "code"}


def test_another_workspaces_key_is_refused(tenancy):
    response = tenancy.client("other-key").get(ws_url(tenancy))

    assert response.status_code == 403 and response.json()["code"] == "session_required"


@pytest.mark.parametrize(("caller", "status", "code"), [
    ("anonymous", 401, "not_authenticated"),
    ("owner", 403, "permission_denied"),
    ("admin", 403, "permission_denied"),
    ("key:agents:read,agents:write,workspaces:read", 403, "session_required"),
])
def test_the_platform_log_refuses_everyone_else(tenancy, caller, status, code):
    response = tenancy.client(caller).get("/api/audit")

    assert response.status_code == status and response.json()["code"] == code


def test_filters_narrow_by_actor_action_target_result_and_time(tenancy):
    hit = row("agent.start", user=tenancy.editor, target_type="agent", target_id="a1", minutes_ago=10)
    row("agent.start", user=tenancy.viewer, target_type="agent", target_id="a1", minutes_ago=10)
    row("agent.stop", user=tenancy.editor, target_type="agent", target_id="a1", minutes_ago=10)
    row("agent.start", user=tenancy.editor, target_type="agent", target_id="a2", minutes_ago=10)
    row("agent.start", user=tenancy.editor, target_type="agent", target_id="a1", minutes_ago=100)
    since = (timezone.now() - timedelta(minutes=30)).isoformat()
    client = client_for(tenancy.platform_admin)

    response = client.get("/api/audit", {"actor": str(tenancy.editor.id), "action": "agent.start",
                                         "targetType": "agent", "targetId": "a1", "since": since, "result": "ok"})

    assert ids(response) == [hit.id]
    by_email = ids(client.get("/api/audit", {"actor": tenancy.editor.email, "action": "agent.", "since": since}))
    assert len(by_email) == 3 and hit.id in by_email  # a prefix ending in "." takes agent.start and agent.stop
    until = (timezone.now() - timedelta(minutes=50)).isoformat()
    assert len(ids(client.get("/api/audit", {"until": until}))) == 1


def test_the_cursor_walks_every_row_once(tenancy):
    made = [row(minutes_ago=minute % 3).id for minute in range(7)]  # equal times: the id breaks the tie
    client = client_for(tenancy.platform_admin)
    seen, cursor = [], ""
    while True:
        body = client.get("/api/audit", {"limit": 3, **({"cursor": cursor} if cursor else {})}).json()
        seen += [item["id"] for item in body["items"]]
        if not body["nextCursor"]:
            break
        cursor = body["nextCursor"]

    assert sorted(seen) == sorted(made) and len(seen) == len(set(seen))


@pytest.mark.parametrize("query", [
    {"cursor": "not-a-cursor"}, {"limit": 0}, {"limit": 201}, {"since": "yesterday"},
    {"format": "xml"}, {"since": "2026-01-02T00:00:00Z", "until": "2026-01-01T00:00:00Z"},
])
def test_bad_query_values_are_400_naming_the_field(tenancy, query):
    response = client_for(tenancy.platform_admin).get("/api/audit", query)

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error" and set(body["fields"]) & (set(query) | {"until"})


def test_csv_and_json_exports_stream_the_whole_selection(tenancy):
    made = [row(workspace=tenancy.workspace, user=tenancy.admin, detail=["name", "vcpu"]) for _ in range(3)]
    row(workspace=tenancy.other_workspace)
    client = client_for(tenancy.admin)

    as_csv = client.get(ws_url(tenancy, "?format=csv"))
    as_json = client.get(ws_url(tenancy, "?format=json"))

    assert as_csv.status_code == 200 and as_csv.streaming and as_csv["Content-Type"].startswith("text/csv")
    lines = list(csv.DictReader(io.StringIO(b"".join(as_csv.streaming_content).decode())))
    assert sorted(int(line["id"]) for line in lines) == sorted(e.id for e in made)
    assert lines[0]["detail"] == "name;vcpu" and lines[0]["actor"] == tenancy.admin.email
    assert as_json.streaming
    items = json.loads(b"".join(as_json.streaming_content))
    assert sorted(item["id"] for item in items) == sorted(e.id for e in made)


def test_a_csv_cell_never_starts_a_formula(tenancy):
    audit_record(action="auth.login", source="api", actor=Actor(label="=HYPERLINK(\"x\")"), result="invalid")

    body = b"".join(client_for(tenancy.platform_admin).get("/api/audit?format=csv").streaming_content).decode()

    assert "'=HYPERLINK" in body


def test_an_unknown_workspace_is_404_for_a_platform_admin_too_when_it_does_not_exist(tenancy):
    response = client_for(tenancy.platform_admin).get(f"/api/workspaces/{uuid.uuid4()}/audit")

    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_an_agents_changes_are_in_the_log_of_every_workspace_it_is_in_its_deletion_too(tenancy):
    """Agent routes name no workspace: the row is linked to the agent's workspaces, read before
    the change (a deletion takes the agent out of them)."""
    shared = tenancy.agent()
    WorkspaceAgentFactory(workspace=tenancy.other_workspace, agent=shared)
    elsewhere = tenancy.agent(workspace=tenancy.other_workspace)
    owner = client_for(tenancy.agent_owner)  # a session: no key's workspace to go by

    assert owner.delete(f"/api/agents/{elsewhere.id}").status_code == 200
    assert owner.delete(f"/api/agents/{shared.id}").status_code == 200

    mine = client_for(tenancy.admin).get(ws_url(tenancy)).json()["items"]
    assert [(item["action"], item["targetId"]) for item in mine] == [("agent.delete", str(shared.id))]
    assert mine[0]["workspaceId"] is None  # the row names no one workspace: it is linked to both
    others = AuditEntry.objects.filter(workspace_links__workspace_id=tenancy.other_workspace.id)
    assert sorted(others.values_list("target_id", flat=True)) == sorted([str(shared.id), str(elsewhere.id)])
