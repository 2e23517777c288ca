"""The provisioning job's logic on the real engine, called directly (no worker)."""

from __future__ import annotations

import pytest

from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.provisioning import agent_provision_retrying
from agents.services.selection import DeployRequest
from fleet.api.principal import Principal
from fleet.models import Event
from tests.infra.provisioning import provision_to_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued_agent(docker_settings, user, django_capture_on_commit_callbacks):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 30
    with django_capture_on_commit_callbacks(execute=False):
        return agent_deploy(principal=Principal(user=user), request=DeployRequest(name="provisioned"))


def test_a_workload_that_cannot_come_up_ends_in_error_with_a_reason(queued_agent, docker_settings):
    # The test engine has no bridge network: it either refuses the container or runs it with
    # a gateway nobody can reach. Both are failures the user must be told about.
    docker_settings.DOCKER_NETWORK_MODE = "bridge"
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 3

    provision_to_end(agent_id=queued_agent.pk)

    agent = Agent.objects.get(pk=queued_agent.pk)
    assert agent.status == "error"
    assert agent.last_error.startswith(
        ("The container engine refused the workload", "The runtime did not become ready within 3 s")
    ), agent.last_error
    event = Event.objects.get(agent_id=agent.pk, kind="agent.error")
    assert event.data["reason"] == agent.last_error


def test_a_job_for_an_agent_stopped_before_it_ran_does_nothing(queued_agent, docker_engine):
    Agent.objects.filter(pk=queued_agent.pk).update(status="stopped")

    provision_to_end(agent_id=queued_agent.pk)

    assert Agent.objects.get(pk=queued_agent.pk).status == "stopped"
    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={queued_agent.pk}"})


def test_a_job_for_a_deleted_agent_does_nothing(queued_agent, docker_engine):
    agent_id = queued_agent.pk
    Agent.objects.filter(pk=agent_id).delete()

    provision_to_end(agent_id=agent_id)

    assert not docker_engine.containers.list(all=True, ignore_removed=True,
                                             filters={"label": f"fleet.agent_id={agent_id}"})


def test_the_usage_token_digest_is_stored_and_only_the_workload_gets_the_token(queued_agent, docker_engine):
    provision_to_end(agent_id=queued_agent.pk)

    agent = Agent.objects.get(pk=queued_agent.pk)
    env = dict(item.split("=", 1) for item in docker_engine.containers.get(agent.container_id).attrs["Config"]["Env"])
    assert agent.usage_token_digest and env["FLEET_USAGE_TOKEN"] not in agent.usage_token_digest
    assert len(agent.usage_token_digest) == 64


def test_a_deploy_waiting_to_retry_says_why_and_running_clears_it(queued_agent, docker_engine):
    Agent.objects.filter(pk=queued_agent.pk).update(status="deploying")

    agent_provision_retrying(agent_id=queued_agent.pk, reason="The Docker engine cannot be reached.")

    waiting = Agent.objects.get(pk=queued_agent.pk)
    assert (waiting.status, waiting.last_error) == ("deploying", "Retrying: The Docker engine cannot be reached.")
    provision_to_end(agent_id=queued_agent.pk)
    running = Agent.objects.get(pk=queued_agent.pk)
    assert (running.status, running.last_error) == ("running", "")


def test_a_retry_note_never_touches_an_agent_no_longer_deploying(queued_agent):
    Agent.objects.filter(pk=queued_agent.pk).update(status="stopped")

    agent_provision_retrying(agent_id=queued_agent.pk, reason="The Docker engine cannot be reached.")

    assert Agent.objects.get(pk=queued_agent.pk).last_error == ""
