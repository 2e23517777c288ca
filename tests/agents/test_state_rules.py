"""The spec's "States and transitions" on the API, for agents whose rules need no engine."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import transaction

from agents.models import Agent
from fleet.models import Event
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory
from tests.support import client_for, in_thread

pytestmark = pytest.mark.django_db


def agent_of(user, **fields):
    fields.setdefault("container_id", "")
    return AgentFactory(owner=user, **fields)


@pytest.mark.parametrize("status", ["queued", "deploying", "running", "warning", "error", "stopped"])
def test_stop_works_from_any_state(user, status):
    agent = agent_of(user, status=status)

    response = client_for(user).post(f"/api/agents/{agent.id}/stop")

    assert (response.status_code, response.json()["status"]) == (200, "stopped")
    assert Agent.objects.get(pk=agent.pk).status == "stopped"
    assert Event.objects.filter(agent_id=agent.id, kind="agent.stopped").exists()


@pytest.mark.parametrize("status", ["warning", "error", "stopped"])
def test_redeploy_from_warning_error_or_stopped_queues_anew(user, status):
    agent = agent_of(user, status=status, last_error="boom", paused_reason="budget_exceeded")

    response = client_for(user).post(f"/api/agents/{agent.id}/redeploy")

    assert response.json() == {"success": True, "status": "queued"}
    agent.refresh_from_db()
    assert (agent.status, agent.container_id, agent.last_error, agent.paused_reason) == ("queued", "", "", None)
    assert Event.objects.filter(agent_id=agent.id, kind="agent.redeployed").exists()


@pytest.mark.parametrize("status", ["queued", "deploying", "running"])
def test_redeploy_from_other_states_is_400_invalid_state(user, status):
    agent = agent_of(user, status=status)

    response = client_for(user).post(f"/api/agents/{agent.id}/redeploy")

    assert (response.status_code, response.json()["code"]) == (400, "invalid_state")
    assert Agent.objects.get(pk=agent.pk).status == status


@pytest.mark.parametrize("action", ["start", "restart"])
def test_start_and_restart_need_a_container(user, action):
    agent = agent_of(user, status="stopped")

    response = client_for(user).post(f"/api/agents/{agent.id}/{action}")

    assert (response.status_code, response.json()["code"]) == (400, "no_container")


@pytest.mark.parametrize("action", ["start", "restart"])
def test_start_and_restart_wait_for_an_agent_still_being_deployed(user, action):
    agent = agent_of(user, status="deploying", container_id="abc123")

    response = client_for(user).post(f"/api/agents/{agent.id}/{action}")

    assert (response.status_code, response.json()["code"]) == (400, "invalid_state")


@pytest.mark.parametrize("status", ["stopped", "queued", "error"])
def test_gateway_url_needs_a_running_agent(user, status):
    agent = agent_of(user, status=status, container_id="abc")

    response = client_for(user).get(f"/api/agents/{agent.id}/gateway-url")

    assert response.status_code == 409


def test_gateway_url_needs_a_container(user):
    agent = agent_of(user, status="running")

    response = client_for(user).get(f"/api/agents/{agent.id}/gateway-url")

    assert (response.status_code, response.json()["code"]) == (409, "no_container")


def test_get_leaves_agents_without_a_workload_as_stored(user):
    agent = agent_of(user, status="queued")

    body = client_for(user).get(f"/api/agents/{agent.id}").json()

    assert body["status"] == "queued"
    for field in ("id", "name", "container_id", "sandbox_type", "vcpu", "ram_mb", "disk_gb", "node",
                  "gateway_host_port", "created_at", "paused_reason"):
        assert field in body
    assert "gateway_token" not in body and "usage_token_digest" not in body


def test_delete_emits_an_event_naming_the_agent_and_its_workspaces(tenancy):
    agent = tenancy.agent(name="doomed")

    tenancy.client("agent_owner").delete(f"/api/agents/{agent.id}")

    event = Event.objects.get(kind="agent.deleted", agent_id=agent.id)
    assert event.workspace_ids == [str(tenancy.workspace.id)]
    assert event.data["agent"]["name"] == "doomed"


@pytest.mark.django_db(transaction=True)
def test_a_second_redeploy_waits_for_the_first_and_then_sees_its_result(settings):
    """Two redeploys of one stopped agent: the second waits for the first's row lock, then
    finds the agent `queued` and is refused; without the lock it would read `stopped` too."""
    user = UserFactory()
    agent = agent_of(user, status="stopped")
    locked = threading.Event()

    def first_redeploy():
        with transaction.atomic():
            row = Agent.objects.select_for_update().get(pk=agent.pk)
            locked.set()
            time.sleep(1.0)  # the second call arrives meanwhile
            row.status = "queued"
            row.save(update_fields=["status"])

    first = in_thread(first_redeploy)
    locked.wait(5)
    second = client_for(user).post(f"/api/agents/{agent.id}/redeploy")
    first.result()

    assert (second.status_code, second.json()["code"]) == (400, "invalid_state")
    assert Agent.objects.get(pk=agent.pk).status == "queued"


def test_an_agent_whose_target_is_no_longer_registered_answers_without_a_500(user):
    agent = agent_of(user, status="running", container_id="abc", deploy_target="k8s", execution_target_id="k8s:gone")
    client = client_for(user)

    assert client.get(f"/api/agents/{agent.id}").json()["status"] == "running"  # the stored state
    start = client.post(f"/api/agents/{agent.id}/restart")
    assert (start.status_code, start.json()["code"]) == (502, "daemon_unreachable")


@pytest.mark.parametrize(
    ("method", "path"),
    [("get", "stats"), ("get", "gateway-url"), ("post", "stop"), ("post", "start"), ("post", "restart")],
)
def test_a_target_no_longer_registered_gives_one_answer_on_every_route(user, method, path):
    agent = agent_of(user, status="running", container_id="abc", deploy_target="k8s", execution_target_id="k8s:gone")

    response = getattr(client_for(user), method)(f"/api/agents/{agent.id}/{path}")

    assert (response.status_code, response.json()["code"]) == (502, "daemon_unreachable")
