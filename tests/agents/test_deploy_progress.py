"""Deploy progress: the steps a provisioning job records as it goes (shown on the agent's
console page while it deploys), on the real engine with the test image."""

from __future__ import annotations

import pytest

from agents.deploy_progress import HANDSHAKE, QUEUED, deploy_step_get, deploy_step_set, deploy_steps
from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.selection import DeployRequest
from fleet.api.principal import Principal
from tests.infra.provisioning import provision_to_end

pytestmark = pytest.mark.django_db


def test_a_new_agent_is_at_the_first_step_and_later_ones_are_still_to_come(user):
    agent_id = "0b9a2f4e-2d7c-4a55-9a51-0d7e0b1c2a3f"

    states = [step.state for step in deploy_steps(agent_id)]

    assert deploy_step_get(agent_id) == QUEUED
    assert states == ["now"] + ["todo"] * (len(states) - 1)


@pytest.mark.docker
def test_provisioning_records_each_step_up_to_the_gateway(docker_settings, user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        agent = agent_deploy(principal=Principal(user=user), request=DeployRequest(name="progressing"))
    deploy_step_set(agent.pk, QUEUED)

    provision_to_end(agent_id=agent.pk)

    assert Agent.objects.get(pk=agent.pk).status == "running"
    assert deploy_step_get(agent.pk) == HANDSHAKE
    assert [step.state for step in deploy_steps(agent.pk)][-1] == "now"
