"""The agents admin: list with workspaces, search, and lifecycle actions through the services."""

from __future__ import annotations

import pytest
from django.test import Client

from agents.models import Agent
from fleet.models import Event

pytestmark = pytest.mark.django_db


def test_the_list_shows_status_owner_target_and_workspaces(console, tenancy):
    agent = tenancy.agent(name="listed-agent")

    page = console.get("/admin/agents/agent/").content.decode()

    assert "listed-agent" in page and tenancy.workspace.name in page and tenancy.agent_owner.email in page
    assert console.get(f"/admin/agents/agent/{agent.pk}/change/").status_code == 200


def test_search_and_filters_answer(console, tenancy):
    tenancy.agent(name="findme")

    assert "findme" in console.get("/admin/agents/agent/?q=findme").content.decode()
    assert console.get("/admin/agents/agent/?status__exact=stopped&deploy_target__exact=docker").status_code == 200


def test_the_stop_action_asks_first_then_goes_through_the_service(console, tenancy):
    agent = tenancy.agent(status="queued", name="to-stop")
    chosen = {"action": "stop", "_selected_action": [str(agent.pk)]}

    asked = console.post("/admin/agents/agent/", chosen)

    assert asked.status_code == 200 and 'id="agent-bulk-confirm"' in asked.content.decode()
    assert "to-stop" in asked.content.decode()
    assert Agent.objects.get(pk=agent.pk).status == "queued"  # nothing done before the answer

    console.post("/admin/agents/agent/", {**chosen, "confirmed": "yes"})

    assert Agent.objects.get(pk=agent.pk).status == "stopped"
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.stopped").exists()


def test_starting_is_not_destructive_and_asks_nothing(console, tenancy):
    agent = tenancy.agent(status="stopped", container_id="")

    response = console.post("/admin/agents/agent/", {"action": "start", "_selected_action": [str(agent.pk)]},
                            follow=True)

    assert 'id="agent-bulk-confirm"' not in response.content.decode()


def test_an_action_the_rules_refuse_is_reported_not_raised(console, tenancy):
    agent = tenancy.agent(status="running")

    response = console.post("/admin/agents/agent/", {"action": "redeploy", "_selected_action": [str(agent.pk)],
                                                      "confirmed": "yes"}, follow=True)

    assert response.status_code == 200
    assert "Could not redeploy" in response.content.decode()
    assert Agent.objects.get(pk=agent.pk).status == "running"


def test_a_non_admin_cannot_open_the_console(tenancy):
    client = Client()
    client.force_login(tenancy.agent_owner)

    assert client.get("/admin/agents/agent/").status_code == 302
