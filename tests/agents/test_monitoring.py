"""The monitoring sweep against real containers and a real loopback gateway."""

from __future__ import annotations

import secrets

import pytest

from agents.models import Agent
from agents.services.deploy import agent_deploy
from agents.services.monitoring import agents_monitor
from agents.services.selection import DeployRequest
from fleet.api.principal import Principal
from fleet.models import Event
from tests.factories.agents import AgentFactory
from tests.infra.docker import exec_in
from tests.infra.provisioning import provision_to_end

pytestmark = pytest.mark.django_db


@pytest.fixture
def running_agent(docker_settings, user, django_capture_on_commit_callbacks):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 30
    with django_capture_on_commit_callbacks(execute=False):
        agent = agent_deploy(principal=Principal(user=user), request=DeployRequest(name="watched"))
    provision_to_end(agent_id=agent.pk)
    agent.refresh_from_db()
    assert agent.status == "running", agent.last_error
    return agent


def _container(docker_engine, agent):
    return docker_engine.containers.get(agent.container_id)


def _kinds(agent):
    return list(Event.objects.filter(agent_id=agent.id).order_by("occurred_at").values_list("kind", flat=True))


def test_a_healthy_agent_stays_running(running_agent):
    result = agents_monitor()

    assert result["checked"] == 1 and result["changed"] == 0
    assert Agent.objects.get(pk=running_agent.pk).status == "running"


def test_two_failed_readiness_checks_mean_warning_and_ready_again_means_running(running_agent, docker_engine):
    container = _container(docker_engine, running_agent)
    exec_in(container, ["rm", "/www/readyz"])

    agents_monitor()
    assert Agent.objects.get(pk=running_agent.pk).status == "running"  # one slow answer is not a warning
    agents_monitor()
    agent = Agent.objects.get(pk=running_agent.pk)
    assert agent.status == "warning"
    assert agent.last_error.startswith("The runtime is not ready")

    exec_in(container, ["sh", "-c", "echo '{\"ready\":true}' > /www/readyz"])
    agents_monitor()
    agent = Agent.objects.get(pk=running_agent.pk)
    assert (agent.status, agent.last_error, agent.readiness_failures) == ("running", "", 0)
    assert _kinds(running_agent)[-2:] == ["agent.warning", "agent.running"]


def test_a_failed_check_between_good_ones_is_forgotten(running_agent, docker_engine):
    container = _container(docker_engine, running_agent)
    exec_in(container, ["rm", "/www/readyz"])
    agents_monitor()
    exec_in(container, ["sh", "-c", "echo '{\"ready\":true}' > /www/readyz"])
    agents_monitor()
    exec_in(container, ["rm", "/www/readyz"])

    agents_monitor()

    assert Agent.objects.get(pk=running_agent.pk).status == "running"


def test_a_clean_exit_means_stopped(running_agent, docker_engine):
    _container(docker_engine, running_agent).stop(timeout=5)  # the runtime exits 0 on TERM

    agents_monitor()

    assert Agent.objects.get(pk=running_agent.pk).status == "stopped"


def test_a_non_zero_exit_means_error_with_a_reason(running_agent, docker_engine):
    _container(docker_engine, running_agent).kill()

    agents_monitor()

    agent = Agent.objects.get(pk=running_agent.pk)
    assert agent.status == "error"
    assert "exited with code 137" in agent.last_error
    assert "agent.error" in _kinds(agent)


def test_agents_being_deployed_are_never_touched(running_agent, docker_engine):
    Agent.objects.filter(pk=running_agent.pk).update(status="deploying")
    _container(docker_engine, running_agent).kill()

    result = agents_monitor()

    assert result["checked"] == 0
    assert Agent.objects.get(pk=running_agent.pk).status == "deploying"


def test_an_unreachable_engine_changes_nothing(running_agent, docker_settings, tmp_path):
    docker_settings.DOCKER_HOST = f"unix://{tmp_path}/gone.sock"

    result = agents_monitor()

    assert result == {"checked": 1, "changed": 0, "unknown": 1}
    assert Agent.objects.get(pk=running_agent.pk).status == "running"


def test_one_broken_agent_does_not_stop_the_sweep(running_agent, docker_engine):
    AgentFactory(status="running", execution_target_id="k8s:gone", deploy_target="k8s")  # no backend for it
    _container(docker_engine, running_agent).kill()

    result = agents_monitor()

    assert result["checked"] == 2 and result["unknown"] == 1
    assert Agent.objects.get(pk=running_agent.pk).status == "error"


def test_a_status_changed_meanwhile_wins_over_the_sweep(db):
    from agents.services.monitoring import Verdict, _apply

    observed = AgentFactory(status="running")  # what the sweep read
    Agent.objects.filter(pk=observed.pk).update(status="stopped")  # a user's stop lands meanwhile

    assert _apply(observed, Verdict("error", "exited with code 1")) is False
    assert Agent.objects.get(pk=observed.pk).status == "stopped"
    assert not Event.objects.filter(agent_id=observed.pk).exists()


def test_adopted_agents_are_judged_by_their_runtimes_readiness(db, settings, http_receiver):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    agent = AgentFactory(
        status="running", is_external=True, deploy_target="external", execution_target_id="external",
        container_id="", gateway_url=http_receiver.url, gateway_token=secrets.token_urlsafe(32),
    )
    http_receiver.respond_with(503)

    agents_monitor()
    agents_monitor()
    assert Agent.objects.get(pk=agent.pk).status == "warning"
    assert http_receiver.requests[-1].path == "/readyz"

    http_receiver.route("/readyz", (200, {"ready": True, "failing": []}))
    http_receiver.respond_with(200)
    agents_monitor()
    assert Agent.objects.get(pk=agent.pk).status == "running"


def test_adopted_agents_with_a_weak_stored_token_fail_closed(db, settings, http_receiver):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    agent = AgentFactory(
        status="running", is_external=True, deploy_target="external", execution_target_id="external",
        container_id="", gateway_url=http_receiver.url, gateway_token="a" * 40,
    )

    agents_monitor()
    agents_monitor()

    assert Agent.objects.get(pk=agent.pk).status == "warning"
    assert http_receiver.requests == []


def test_running_the_provisioning_job_again_creates_no_second_workload(running_agent, docker_engine):
    label = {"label": f"fleet.agent_id={running_agent.id}"}

    provision_to_end(agent_id=running_agent.pk)  # a duplicate delivery after success: nothing to do
    Agent.objects.filter(pk=running_agent.pk).update(status="deploying")  # a redelivery mid-way
    provision_to_end(agent_id=running_agent.pk)

    assert len(docker_engine.containers.list(all=True, ignore_removed=True, filters=label)) == 1
    agent = Agent.objects.get(pk=running_agent.pk)
    assert (agent.status, agent.container_id) == ("running", running_agent.container_id)
