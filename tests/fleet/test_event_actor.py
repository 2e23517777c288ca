"""Events say who caused them: the signed-in user of the request that emitted them (a session in
the API or the console, or a workspace API key, marked so); Fleet's own work names nobody."""

from __future__ import annotations

import pytest

from fleet import events
from fleet.models import Event
from tests.factories.alerts import make_rule, webhook
from tests.factories.workspaces import make_api_key
from tests.support import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def rule(tenancy, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    return make_rule(workspace=tenancy.workspace, channels=[webhook("http://127.0.0.1:9/hook")])


def _test_url(tenancy, rule) -> str:
    return f"/api/workspaces/{tenancy.workspace.id}/alert-rules/{rule.id}/test"


def test_an_api_session_and_an_api_key_are_named(tenancy, rule):
    assert client_for(tenancy.admin).post(_test_url(tenancy, rule)).status_code == 200
    _, raw = make_api_key(workspace=tenancy.workspace, scopes=["agents:write"], created_by=tenancy.owner)
    assert client_for(api_key=raw).post(_test_url(tenancy, rule)).status_code == 200

    assert list(Event.objects.order_by("occurred_at").values_list("actor", flat=True)) == [
        tenancy.admin.email, f"{tenancy.owner.email} (API key)"]
    listed = client_for(tenancy.viewer).get(f"/api/workspaces/{tenancy.workspace.id}/events").json()
    assert [event["actor"] for event in listed] == [f"{tenancy.owner.email} (API key)", tenancy.admin.email]


def test_a_console_action_names_the_operator_and_the_log_shows_it(console, platform_admin, rule, tenancy):
    console.post("/admin/alerts/alertrule/", {"action": "send_test", "_selected_action": [str(rule.pk)]})
    agent = tenancy.agent(name="named-agent")
    events.emit("agent.error", agent=agent, message="boom")  # Fleet's own: no request

    assert list(Event.objects.order_by("occurred_at").values_list("actor", flat=True)) == [platform_admin.email, ""]
    log = console.get("/admin/fleet/event/").content.decode()
    assert platform_admin.email in log and "named-agent" in log and str(agent.pk) not in log
