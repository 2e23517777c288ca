"""last_error says the current reason or nothing, in the services and in GET /agents."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.lifecycle import agent_stop
from agents.services.selection import DeployRequest
from agents.tasks import provision_agent
from fleet.api.principal import Principal
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


def test_a_failed_image_pull_is_reported_as_such(docker_settings, user, django_capture_on_commit_callbacks):
    # A registry on loopback where nothing listens: the engine's pull really fails.
    docker_settings.AGENT_IMAGE_OPENCLAW = "127.0.0.1:9/fleet/missing:1"
    docker_settings.AGENT_PROVISION_MAX_RETRIES = 0
    with django_capture_on_commit_callbacks(execute=False):
        agent = agent_deploy(principal=Principal(user=user), request=DeployRequest(name="unpullable"))

    provision_agent.apply(args=[str(agent.pk)])

    agent.refresh_from_db()
    assert agent.status == "error"
    assert "could not pull 127.0.0.1:9/fleet/missing:1" in agent.last_error, agent.last_error
    assert "could not be reached" not in agent.last_error


def test_stopping_a_deploy_that_was_retrying_drops_the_stale_reason(user):
    agent = AgentFactory(owner=user, status="deploying", container_id="", last_error="Retrying: engine down")

    agent_stop(agent=agent)

    assert Agent.objects.filter(pk=agent.pk).values_list("status", "last_error").get() == ("stopped", "")


def test_an_agent_found_stopped_says_why_and_the_list_and_detail_show_it(tenancy, docker_settings):
    # A container reference the real engine does not know: the workload is gone.
    agent = tenancy.agent(status="warning", container_id="f" * 64, last_error="The runtime is not ready: readyz")
    client = tenancy.client("editor")

    detail = client.get(f"/api/agents/{agent.id}").json()
    listed = {row["id"]: row for row in client.get("/api/agents").json()}[str(agent.id)]

    assert (detail["status"], detail["last_error"]) == ("stopped", "The container no longer exists.")
    assert (listed["status"], listed["last_error"]) == ("stopped", "The container no longer exists.")
