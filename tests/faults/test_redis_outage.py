"""Redis stopped and started under the Procfile's processes (docs/reliability.md): while it is
down the API answers reads and its health, writes that need it fail with the JSON error body
(never an HTML 500): login (its throttle guards against guessing) answers 503 cache_unavailable;
a new deploy (its rate limit is skipped while the cache is away) and a redeploy are stored
`queued` with a 503 broker_unavailable, and a client's retry of the deploy with its
Idempotency-Key answers the same agent. Once Redis is back on the same port, empty (no
persistence: every queued message is gone), the reconciler publishes both jobs again and both
agents run, one container each, without restarting any process."""

from __future__ import annotations

import time

import pytest
import requests

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from tests.factories.accounts import UserFactory
from tests.faults.stack import private_stack, wait_for
from tests.infra.web_server import procfile_web_server

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

QUEUED_DEADLINE = 3  # seconds a deploy may stay queued before the reconciler publishes it again
RECOVERY_BOUND = 30  # seconds from Redis back to the agent running


def _json_error(response: requests.Response, status: int, code: str) -> dict:
    assert response.headers["Content-Type"].startswith("application/json"), response.text[:500]
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code), body
    assert body["error"]
    return body


def test_redis_stopped_and_started(tmp_path, docker_engine, docker_engine_url):
    owner = UserFactory(password="correct horse battery")
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}
    env = {"AGENT_QUEUED_DEADLINE_SECONDS": str(QUEUED_DEADLINE)}

    with private_stack(tmp_path, docker_engine_url, env=env) as stack, \
            procfile_web_server(tmp_path, env=stack.env) as web:
        stack.worker("provision")
        stack.worker("periodic")
        first = requests.post(f"{web}/api/agents/deploy", json={"name": "before-outage"}, headers=auth, timeout=30)
        assert first.status_code == 201, first.text[:500]
        agent = Agent.objects.get(owner=owner)
        wait_for(lambda: Agent.objects.get(pk=agent.pk).status == Status.RUNNING, timeout=30,
                 what="the deploy before the outage running", stack=stack)
        stopped = requests.post(f"{web}/api/agents/{agent.pk}/stop", headers=auth, timeout=30)
        assert stopped.status_code == 200, stopped.text[:500]

        stack.redis.stop()

        listed = requests.get(f"{web}/api/agents", headers=auth, timeout=30)
        assert listed.status_code == 200, listed.text[:500]
        assert "before-outage" in listed.text, listed.text[:500]
        health = requests.get(f"{web}/api/health", timeout=30)
        assert health.status_code != 500 and health.json()["checks"]["redis"] == "error", health.text[:500]
        login = requests.post(f"{web}/api/auth/login", json={"email": owner.email, "password": "correct horse battery"},
                              timeout=30)
        _json_error(login, 503, "cache_unavailable")
        keyed = {**auth, "Idempotency-Key": "during-outage-1"}
        deploy = requests.post(f"{web}/api/agents/deploy", json={"name": "during-outage"}, headers=keyed, timeout=30)
        _json_error(deploy, 503, "broker_unavailable")
        retried = requests.post(f"{web}/api/agents/deploy", json={"name": "during-outage"}, headers=keyed, timeout=30)
        assert retried.headers.get("Idempotent-Replayed") == "true", retried.text[:500]
        redeploy = requests.post(f"{web}/api/agents/{agent.pk}/redeploy", headers=auth, timeout=30)
        _json_error(redeploy, 503, "broker_unavailable")
        assert sorted(Agent.objects.filter(owner=owner).values_list("name", "status")) == [
            ("before-outage", Status.QUEUED), ("during-outage", Status.QUEUED)  # stored once each, not lost
        ]
        during = Agent.objects.get(owner=owner, name="during-outage")
        assert retried.json()["id"] == str(during.pk)

        stack.redis.start()
        back = time.monotonic()

        def running():
            stack.send("agents.tasks.reconcile_deploys", queue="periodic")  # beat's every minute, sooner
            return not Agent.objects.filter(owner=owner).exclude(status=Status.RUNNING).exists()

        wait_for(running, timeout=RECOVERY_BOUND, interval=2, what="the deploys made during the outage running",
                 stack=stack)
        recovered = time.monotonic() - back

        for each in (agent, during):
            containers = docker_engine.containers.list(all=True, ignore_removed=True,
                                                       filters={"label": f"fleet.agent_id={each.pk}"})
            assert len(containers) == 1, [c.name for c in containers]
            assert containers[0].id == Agent.objects.get(pk=each.pk).container_id
        assert Agent.objects.filter(owner=owner).count() == 2
        assert requests.get(f"{web}/api/health", timeout=30).json()["checks"]["redis"] == "ok"
        assert recovered < RECOVERY_BOUND
