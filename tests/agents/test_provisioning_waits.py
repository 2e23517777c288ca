"""A deploy waits for its runtime without holding a worker: the looks at a starting workload are
tasks of their own (agents.tasks.await_agent_ready). One real worker thread (the in-process
Celery worker on Redis, pool solo) and runtimes held unready: every deploy still gets its
container while the first waits, and other work runs meanwhile. A job that slept through the
wait would hold the only thread until its runtime was ready."""

from __future__ import annotations

import threading
import time

import pytest

from agents.gateway import Readiness
from agents.models import Agent
from agents.services import provisioning
from fleet.celery import app
from fleet.heartbeat import heartbeat_age
from tests.factories.accounts import UserFactory
from tests.support import client_for

pytestmark = [pytest.mark.docker, pytest.mark.worker]

DEPLOYS = 3


@pytest.fixture
def held_unready(monkeypatch):
    """Every runtime reads as starting until the event is set (the worker runs in this process)."""
    released = threading.Event()
    real = provisioning.gateway_readiness

    def readiness(agent, **kwargs):
        if not released.is_set():
            return Readiness(ready=False, failing=("held starting by the test",))
        return real(agent, **kwargs)

    monkeypatch.setattr(provisioning, "gateway_readiness", readiness)
    return released


def test_deploys_waiting_for_their_runtimes_share_one_worker_thread_and_leave_it_to_other_work(
    docker_settings, celery_worker_live, held_unready, settings
):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 120
    client = client_for(UserFactory())
    ids = []
    for n in range(DEPLOYS):
        response = client.post("/api/agents/deploy", {"name": f"waiting-{n}"}, format="json")
        assert response.status_code == 201, response.content
        ids.append(response.json()["id"])

    def all_waiting():
        rows = Agent.objects.filter(pk__in=ids).values_list("status", "container_id", "ready_deadline_at")
        return len(rows) == DEPLOYS and all(s == "deploying" and c and d for s, c, d in rows)

    # Every container is created while none is ready: no job holds the thread through its wait.
    celery_worker_live.wait_until(all_waiting, timeout=60)
    sent = time.time()
    app.send_task("fleet.worker_heartbeat", queue=settings.PERIODIC_QUEUE)
    celery_worker_live.wait_until(lambda: (heartbeat_age() or 1e9) < time.time() - sent, timeout=30)
    assert set(Agent.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"deploying"}

    held_unready.set()

    celery_worker_live.wait_until(
        lambda: set(Agent.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"running"}, timeout=60
    )


def test_a_runtime_never_ready_fails_at_the_rows_deadline_and_the_looks_stop(
    docker_settings, celery_worker_live, held_unready
):
    docker_settings.AGENT_READY_TIMEOUT_SECONDS = 3
    client = client_for(UserFactory())
    response = client.post("/api/agents/deploy", {"name": "never-ready"}, format="json")
    agent_id = response.json()["id"]

    celery_worker_live.wait_until(
        lambda: Agent.objects.filter(pk=agent_id, status="error").exists(), timeout=60
    )
    agent = Agent.objects.get(pk=agent_id)
    assert agent.last_error.startswith("The runtime did not become ready within 3 s"), agent.last_error
    assert "held starting by the test" in agent.last_error
