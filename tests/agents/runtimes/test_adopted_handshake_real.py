"""An adopted runtime's first handshake, made in the background right after the adoption
(agents.handshake.first): with a real runtime on loopback and a real Celery worker, the version is
recorded within seconds, well under the 30 s monitoring period; a refused token ends in `error`."""

from __future__ import annotations

import time

import pytest

from agents.models import Agent
from agents.services.handshake import NO_HANDSHAKE, agent_first_handshake
from fleet.models import Event
from tests.factories.agents import AgentFactory
from tests.infra.runtimes import free_loopback_port

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.runtime]
# Only shakes hands with the runtimes, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True

WELL_UNDER_A_MONITORING_PERIOD = 10.0


@pytest.fixture(params=["hermes", "openclaw"])
def runtime(request):
    return request.getfixturevalue(f"{request.param}_runtime")


def _adopt(client, settings, runtime, token: str) -> str:
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]  # adopted gateways are checked by netsafety
    settings.GATEWAY_ALLOWED_PORTS = f"{runtime.port}"
    response = client.post("/api/agents/adopt", {"name": f"adopted-{runtime.family}", "gateway_token": token,
                                                 "runtime_family": runtime.family, "host": "127.0.0.1",
                                                 "port": runtime.port}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "running"
    return response.json()["id"]


def test_the_first_handshake_is_recorded_within_seconds_of_the_adoption(runtime, celery_worker_live, user_client,
                                                                        settings):
    started = time.monotonic()
    agent_id = _adopt(user_client, settings, runtime, runtime.token)

    celery_worker_live.wait_until(lambda: Agent.objects.get(pk=agent_id).last_handshake_at is not None,
                                  timeout=WELL_UNDER_A_MONITORING_PERIOD)

    assert time.monotonic() - started < WELL_UNDER_A_MONITORING_PERIOD
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.status, agent.runtime_version, agent.last_error) == ("running", runtime.version, "")


def test_a_refused_token_puts_the_adopted_agent_in_error_in_the_background(runtime, celery_worker_live,
                                                                           user_client, settings):
    wrong = "Wr0ng-" + runtime.token[6:]  # as strong as the right one, but not it
    agent_id = _adopt(user_client, settings, runtime, wrong)

    celery_worker_live.wait_until(lambda: Agent.objects.get(pk=agent_id).status == "error",
                                  timeout=WELL_UNDER_A_MONITORING_PERIOD)

    agent = Agent.objects.get(pk=agent_id)
    assert agent.last_error.startswith("The runtime refused the agent's gateway token")
    assert wrong not in agent.last_error and runtime.token not in agent.last_error
    assert agent.last_handshake_at is None
    assert Event.objects.filter(agent_id=agent_id, kind="agent.error").exists()


def test_a_runtime_reached_later_records_its_version_and_clears_the_reason(hermes_runtime, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1", "::1"]
    closed = free_loopback_port()  # nothing listens there yet
    agent = AgentFactory(runtime_family="hermes", status="running", is_external=True, deploy_target="external",
                         execution_target_id="external", container_id="", gateway_host_port=closed,
                         gateway_url=f"http://127.0.0.1:{closed}", gateway_token=hermes_runtime.token)

    assert agent_first_handshake(agent_id=agent.pk) is False  # to be tried again
    assert Agent.objects.get(pk=agent.pk).last_error.startswith(NO_HANDSHAKE)
    Agent.objects.filter(pk=agent.pk).update(gateway_host_port=hermes_runtime.port,
                                             gateway_url=f"http://127.0.0.1:{hermes_runtime.port}")

    assert agent_first_handshake(agent_id=agent.pk) is True
    reached = Agent.objects.get(pk=agent.pk)
    assert (reached.status, reached.runtime_version, reached.last_error) == ("running", hermes_runtime.version, "")
    # Recorded: nothing left to do, whatever the runtime would answer now.
    Agent.objects.filter(pk=agent.pk).update(gateway_host_port=closed, gateway_url=f"http://127.0.0.1:{closed}")
    assert agent_first_handshake(agent_id=agent.pk) is True
    assert Agent.objects.get(pk=agent.pk).last_error == ""
