"""The monitoring sweep and a workload the engine restarts by itself: a real container killed for
lack of memory (its memory limit, its own allocation) and restarted by its `unless-stopped`
policy gives one `agent.warning` with the reason, `restartCount`/`oomKilled` on the agent, and
the agent stays `running`; the rules on engine answers (LiveState) without an engine."""

from __future__ import annotations

import secrets
import time
from unittest import mock

import pytest
from django.utils import timezone

from agents.backends.base import LiveState, RuntimeBackend
from agents.backends.kubernetes import _live_state
from agents.gateway import Readiness
from agents.models import Agent
from agents.services.monitoring import agents_monitor
from fleet.models import Event
from tests.factories.agents import AgentFactory
from tests.infra.docker import SESSION_ID, SESSION_LABEL, TEST_IMAGE
from tests.infra.runtimes import free_loopback_port

pytestmark = pytest.mark.django_db

MB = 1024 * 1024
# PID 1 holds 128 MB in a shell variable under a 32 MB limit, once (the marker survives the
# restart in the container's filesystem), then runs the test runtime as usual.
OOM_ONCE = ('if [ ! -f /tmp/oomed ]; then touch /tmp/oomed; held="$(head -c 134217728 /dev/zero | tr "\\0" x)"; fi; '
            "exec /entrypoint.sh")
# Seconds for the container to be killed, restarted and serving again: about 2 on a quiet
# machine, far more beside the suite's runtimes (5 was not enough once).
READY_AGAIN_WITHIN = 45
OOM_REASON = "The engine restarted the runtime: it was killed for lack of memory (OOM) (1 restart so far)."


def _agent(**fields):
    """A running Docker agent shaken hands with (the sweep only judges its container and readiness)."""
    return AgentFactory(gateway_token=secrets.token_urlsafe(32), last_handshake_at=timezone.now(), **fields)


def _warnings(agent):
    return list(Event.objects.filter(agent_id=agent.pk, kind="agent.warning").order_by("occurred_at"))


@pytest.fixture
def oom_once(docker_engine, docker_settings):
    port = free_loopback_port()
    container = docker_engine.containers.run(
        TEST_IMAGE, ["sh", "-c", OOM_ONCE], entrypoint=[], detach=True, network_mode="host",
        environment={"OPENCLAW_GATEWAY_PORT": str(port)}, labels={SESSION_LABEL: SESSION_ID},
        mem_limit=32 * MB, memswap_limit=32 * MB, restart_policy={"Name": "unless-stopped"},
    )
    deadline = time.monotonic() + READY_AGAIN_WITHIN
    while time.monotonic() < deadline:  # killed, restarted, serving again
        container.reload()
        if container.attrs["RestartCount"] >= 1 and container.attrs["State"]["Running"]:
            break
        time.sleep(0.1)
    try:
        yield container, port
    finally:
        container.remove(force=True)


def test_an_oom_killed_runtime_the_engine_restarted_is_reported_once(oom_once):
    container, port = oom_once
    assert container.attrs["State"]["OOMKilled"] is True and container.attrs["RestartCount"] == 1
    agent = _agent(container_id=container.id, gateway_host_port=port)

    deadline = time.monotonic() + READY_AGAIN_WITHIN
    while time.monotonic() < deadline:  # ready once its gateway answers again
        agents_monitor()
        if _warnings(agent):
            break
        time.sleep(0.25)
    agents_monitor()  # the same restart, seen again: nothing new

    stored = Agent.objects.get(pk=agent.pk)
    assert (stored.status, stored.restart_count, stored.oom_killed) == ("running", 1, True)
    assert stored.last_error == OOM_REASON
    [warning] = _warnings(agent)
    assert warning.data["reason"] == stored.last_error
    assert (warning.data["restart_count"], warning.data["oom_killed"]) == (1, True)


def test_the_detail_shows_the_restarts(oom_once, user, user_client):
    container, port = oom_once
    agent = _agent(owner=user, container_id=container.id, gateway_host_port=port)
    agents_monitor()

    body = user_client.get(f"/api/agents/{agent.pk}").json()

    assert (body["restartCount"], body["oomKilled"]) == (1, True)


def _watched(live: LiveState, **fields):
    agent = _agent(**fields)
    backend = mock.Mock(spec=RuntimeBackend)  # inspected in a thread: not read on the event loop
    backend.inspect.return_value = live
    patches = (mock.patch("agents.services.monitoring_engines.backend_of", return_value=backend),
               mock.patch("agents.services.monitoring_verdicts.gateway_readiness", return_value=Readiness(ready=True)))
    return agent, backend, patches


def _sweep(patches):
    with patches[0], patches[1]:
        agents_monitor()


def test_each_new_restart_warns_once_and_a_lower_count_is_a_new_workload():
    agent, backend, patches = _watched(LiveState(exists=True, running=True, status="running", restart_count=1,
                                                 oom_killed=True))
    _sweep(patches)
    _sweep(patches)
    backend.inspect.return_value = LiveState(exists=True, running=True, status="running", restart_count=2)
    _sweep(patches)
    backend.inspect.return_value = LiveState(exists=True, running=True, status="running", restart_count=0)
    _sweep(patches)

    reasons = [event.data["reason"] for event in _warnings(agent)]
    assert reasons == [OOM_REASON, "The engine restarted the runtime: its process ended (2 restarts so far)."]
    stored = Agent.objects.get(pk=agent.pk)
    assert (stored.status, stored.restart_count, stored.oom_killed) == ("running", 0, False)


def test_a_first_restart_in_progress_is_not_a_crash_loop():
    agent, backend, patches = _watched(LiveState(exists=True, running=False, status="restarting", restart_count=1,
                                                 oom_killed=True, exit_code=137))
    _sweep(patches)

    stored = Agent.objects.get(pk=agent.pk)
    assert (stored.status, stored.restart_count, stored.oom_killed) == ("running", 1, True)
    assert len(_warnings(agent)) == 1


def test_a_crash_loop_after_oom_kills_says_so():
    agent, backend, patches = _watched(LiveState(exists=True, running=False, status="restarting", restart_count=3,
                                                 oom_killed=True, exit_code=137))
    _sweep(patches)

    stored = Agent.objects.get(pk=agent.pk)
    assert stored.status == "error"
    assert stored.last_error == "The container is crash-looping, killed for lack of memory (OOM) (3 restarts)."
    assert stored.restart_count == 3
    assert not _warnings(agent)  # the error said why


def test_a_kubernetes_container_ended_by_an_oom_kill_reads_as_one():
    pod = {"spec": {"nodeName": "n1"}, "status": {"phase": "Running", "containerStatuses": [{
        "name": "runtime", "restartCount": 1, "state": {"running": {"startedAt": "2026-11-28T05:00:00Z"}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137}},
    }]}}
    live = _live_state({"spec": {"replicas": 1}}, pod, 18789)

    assert (live.running, live.restart_count, live.oom_killed) == (True, 1, True)
