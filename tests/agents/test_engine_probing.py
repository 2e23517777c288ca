"""Engine probing against the real Docker engine, made unreachable by pointing the target at a
dead socket (a path where nothing listens) and recovered by pointing it back."""

from __future__ import annotations

import pytest

from agents.backends import registry
from agents.models import Agent, EngineHealth
from agents.services.engine_probe import engine_reason_prefix, engines_probe
from agents.services.monitoring import agents_monitor
from alerts.models import Delivery
from fleet.celery import app as celery_app
from fleet.events import emit
from fleet.heartbeat import heartbeat_record
from fleet.models import Event
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.alerts import fan_out, make_rule
from tests.factories.workspaces import WorkspaceFactory

pytestmark = pytest.mark.django_db

EMAIL = {"type": "email", "to": ["ops@example.com"]}



def _engine_events():
    return list(Event.objects.filter(kind__startswith="engine.").order_by("occurred_at").values_list("kind", "data"))


def test_probe_targets_lists_docker_and_the_job_is_installed():
    from agents.apps import AgentsConfig

    assert "docker" in registry.probe_targets()
    jobs = {job.task: job for job in AgentsConfig.periodic_tasks}
    assert jobs["agents.tasks.probe_engines"].every_seconds == 30
    celery_app.loader.import_default_modules()  # the apps' tasks, as a worker finds them when it starts
    assert "agents.tasks.probe_engines" in celery_app.tasks


def test_an_unreachable_engine_warns_its_agents_alerts_once_and_recovers(
    docker_settings, dead_socket, api_client, django_capture_on_commit_callbacks
):
    workspace = WorkspaceFactory()
    agent = AgentFactory(owner=workspace.owner)
    WorkspaceAgentFactory(workspace=workspace, agent=agent)
    elsewhere = AgentFactory(execution_target_id="k8s:c1", deploy_target="k8s")  # another target
    make_rule(workspace=workspace, pattern="engine.*", channels=[EMAIL])
    heartbeat_record()
    real_engine = docker_settings.DOCKER_HOST

    assert engines_probe() == {"docker": "ok"}
    assert _engine_events() == []  # a first "ok" recovers from nothing
    assert api_client.get("/api/health").json()["checks"]["engines"] == {"docker": "ok"}

    docker_settings.DOCKER_HOST = dead_socket
    with django_capture_on_commit_callbacks(execute=False):
        assert engines_probe() == {"docker": "unreachable"}
        assert engines_probe() == {"docker": "unreachable"}  # the next tick: no second event
    fan_out()  # what the dispatch does once the probe's transaction has committed

    events = _engine_events()
    assert [kind for kind, _ in events] == ["engine.unreachable"]
    assert events[0][1]["target_id"] == "docker" and dead_socket.removeprefix("unix://") in events[0][1]["reason"]
    assert Delivery.objects.filter(event__kind="engine.unreachable").count() == 1  # the rule got it
    agent.refresh_from_db()
    assert agent.status == "warning"
    assert agent.last_error.startswith(engine_reason_prefix("docker")) and "cannot be reached" in agent.last_error
    assert Agent.objects.get(pk=elsewhere.pk).status == "running"
    assert Event.objects.filter(agent_id=agent.pk, kind="agent.warning").count() == 1
    health = api_client.get("/api/health")
    assert health.status_code == 200
    assert health.json()["status"] == "degraded" and health.json()["checks"]["engines"] == {"docker": "unreachable"}
    assert agents_monitor()["unknown"] >= 1  # monitoring cannot tell either, and leaves the warning be
    assert Agent.objects.get(pk=agent.pk).status == "warning"

    docker_settings.DOCKER_HOST = real_engine
    with django_capture_on_commit_callbacks(execute=False):
        assert engines_probe() == {"docker": "ok"}
        assert engines_probe() == {"docker": "ok"}
    fan_out()

    assert [kind for kind, _ in _engine_events()] == ["engine.unreachable", "engine.recovered"]
    assert _engine_events()[1][1]["target_id"] == "docker"
    assert Delivery.objects.filter(event__kind="engine.recovered").count() == 1
    agent.refresh_from_db()
    assert (agent.status, agent.last_error) == ("running", "")
    assert EngineHealth.objects.get(pk="docker").state == "ok"
    assert api_client.get("/api/health").json() == {
        "status": "ok", "checks": {"database": "ok", "redis": health.json()["checks"]["redis"], "worker": "ok",
                                   "engines": {"docker": "ok"}, "scheduler": {}},
        "totals": {"engines": {}},
        "warnings": [],  # the host network (docker_settings): bridged agents' warning does not apply
    }


def test_a_warning_for_another_reason_is_not_cleared_by_a_recovery(docker_settings):
    other = AgentFactory(status="warning", last_error="The runtime is not ready: readyz")

    assert engines_probe() == {"docker": "ok"}

    assert Agent.objects.filter(pk=other.pk).values_list("status", "last_error").get() == (
        "warning", "The runtime is not ready: readyz")


def test_alert_rules_accept_the_engine_event_kinds(tenancy):
    client = tenancy.client("admin")
    for pattern in ("engine.unreachable", "engine.recovered", "engine.*"):
        response = client.post(
            f"/api/workspaces/{tenancy.workspace.id}/alert-rules",
            {"name": pattern, "eventPattern": pattern, "channels": [EMAIL]},
            format="json",
        )
        assert response.status_code == 200, response.json()
    emit("engine.unreachable", message="x", workspace_ids=[tenancy.workspace.id], data={"target_id": "docker"})
    fan_out()
    assert Delivery.objects.filter(event__kind="engine.unreachable").count() == 2  # the literal and the glob
