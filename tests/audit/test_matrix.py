"""The audit matrix: representative actions through the API, the console and a management
command, each leaving exactly one row with its action, target and result."""

from io import StringIO

import pytest
from django.core.management import call_command

from agents.files import api as files_api
from audit.models import AuditEntry
from tests.factories.workspaces import make_api_key
from tests.support import client_for

pytestmark = pytest.mark.django_db


def api(caller_attr, method, url, body=None):
    def act(tenancy):
        client = tenancy.client(caller_attr)
        return getattr(client, method)(url(tenancy), body(tenancy) if callable(body) else body, format="json")
    return act


def ws(tenancy):
    return f"/api/workspaces/{tenancy.workspace.id}"


def agent_url(suffix=""):
    def url(tenancy):
        tenancy.agent_id = tenancy.agent().id
        return f"/api/agents/{tenancy.agent_id}{suffix}"
    return url


def key_url(tenancy):
    key = make_api_key(workspace=tenancy.workspace, scopes=["agents:read"])[0]
    tenancy.key_id = key.id
    return f"{ws(tenancy)}/api-keys/{key.id}"


# (name, action, (expected action, target type, result), a function of the tenancy giving the target id or None)
MATRIX = [
    ("workspace created", api("owner", "post", lambda t: "/api/workspaces", {"name": "Second"}),
     ("workspace.create", "workspace", "ok"), "created"),
    ("member's role changed", api("admin", "patch", lambda t: f"{ws(t)}/members/{t.viewer.id}", {"role": "editor"}),
     ("workspace.member.update", "workspace-member", "ok"), lambda t: str(t.viewer.id)),
    ("member removed", api("admin", "delete", lambda t: f"{ws(t)}/members/{t.viewer.id}"),
     ("workspace.member.delete", "workspace-member", "ok"), lambda t: str(t.viewer.id)),
    ("API key created", api("admin", "post", lambda t: f"{ws(t)}/api-keys", {"name": "ci", "scopes": ["agents:read"]}),
     ("workspace.api.key.create", "workspace-api-key", "ok"), "created"),
    ("API key revoked", api("admin", "delete", key_url),
     ("workspace.api.key.delete", "workspace-api-key", "ok"), lambda t: str(t.key_id)),
    ("provider key created", api("owner", "post", lambda t: "/api/llm/keys",
                                 {"provider": "openai", "label": "k", "apiKey": "sk-matrix-12345678"}),
     ("llm.keys", "", "ok"), None),
    ("lifecycle action refused: the agent has no workload", api("agent_owner", "post", agent_url("/stop")),
     ("agent.stop", "agent", None), "agent"),
    ("agent deleted", api("agent_owner", "delete", agent_url()), ("agent.delete", "agent", None), "agent"),
    ("terminal session asked", api("agent_owner", "post", agent_url("/terminal/session")),
     ("agent.terminal.session", "agent", None), "agent"),
    ("gateway proxy session asked", api("agent_owner", "post", agent_url("/gateway/session")),
     ("agent.gateway.session", "agent", None), "agent"),
    ("refused sign-in", api("anonymous", "post", lambda t: "/api/auth/login",
                            lambda t: {"email": t.viewer.email, "password": "not-the-password"}),
     ("auth.login", "", "invalid_credentials"), None),
    ("sign-out", api("viewer", "post", lambda t: "/api/auth/logout"), ("auth.logout", "", "ok"), None),
    ("another workspace's key on a session-only route", api("other-key", "post", lambda t: f"{ws(t)}/api-keys",
                                                             {"name": "x"}),
     ("workspace.api.key.create", "workspace-api-key", "session_required"), None),
]


@pytest.mark.parametrize(("act", "expected", "target"), [m[1:] for m in MATRIX], ids=[m[0] for m in MATRIX])
def test_each_action_leaves_exactly_one_row(tenancy, act, expected, target):
    response = act(tenancy)

    rows = list(AuditEntry.objects.filter(source="api"))
    assert len(rows) == 1, [(r.action, r.result) for r in rows]
    row = rows[0]
    action, target_type, result = expected
    body = response.json() if response.content else {}
    assert (row.action, row.target_type) == (action, target_type)
    assert row.result == (result or ("ok" if response.status_code < 300 else body["code"])), body
    if target == "created":
        assert row.target_id == body["id"]
    elif target == "agent":
        assert row.target_id == str(tenancy.agent_id)
    elif target is not None:
        assert row.target_id == target(tenancy)


def test_a_console_change_leaves_one_row(console, platform_admin):
    console.post("/admin/accounts/usergroup/add/", {"name": "ops", "memberships-TOTAL_FORMS": "0",
                                                    "memberships-INITIAL_FORMS": "0"})

    row = AuditEntry.objects.get(source="console")
    assert (row.action, row.target_type, row.result) == ("console.accounts.usergroup.create", "accounts.usergroup",
                                                         "ok")


def test_a_management_command_leaves_one_row():
    call_command("setup_periodic_tasks", stdout=StringIO())

    row = AuditEntry.objects.get(source="command")
    assert (row.action, row.target_type, row.target_id, row.result) == (
        "command.setup_periodic_tasks", "command", "setup_periodic_tasks", "ok")


def test_an_export_leaves_one_row(tenancy, monkeypatch):
    monkeypatch.setattr(files_api, "agent_export", lambda agent: StringIO("bundle"))
    agent = tenancy.agent()

    response = client_for(tenancy.agent_owner).get(f"/api/agents/{agent.id}/export")

    assert response.status_code == 200
    row = AuditEntry.objects.get(source="api")
    assert (row.action, row.target_type, row.target_id, row.result) == ("agent.export", "agent", str(agent.id), "ok")
