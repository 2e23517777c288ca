"""The Docker engine stopped for a minute under running agents, then started (docs/reliability.md).

The engine is a dockerd of the test's own (tests.infra.private_docker): the shared test engine
keeps serving the other tests. The Procfile's web, provision and periodic processes run on it;
the test sends the periodic jobs (engine probe, monitoring sweep) as beat does, more often.

While the engine is down (a SIGTERM, as `systemctl stop docker`; without live-restore it stops
the containers) both agents are `warning` with the engine's reason, over the API as in the
database, `engine.unreachable` is emitted once for the whole minute and the API's health says
so. Once the engine is back, its restart policy (`unless-stopped`) has started the same
containers again: `engine.recovered` once, both agents `running` within the bound, each with
exactly the container it had before (none made again, none lost), no other container on the
engine, and no agent judged stopped or failed on the way."""

from __future__ import annotations

import time

import pytest
import requests

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from agents.services.engine_probe import engine_reason_prefix
from fleet.models import Event
from tests.factories.accounts import UserFactory
from tests.faults.stack import private_stack, wait_for
from tests.infra.docker import TEST_IMAGE
from tests.infra.private_docker import PrivateDocker
from tests.infra.web_server import procfile_web_server

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

AGENTS = 2
OUTAGE_SECONDS = 60  # the issue's minute
SWEEP_EVERY = 5  # seconds between the probes and sweeps the test sends (beat: every 30 s)
RECOVERY_BOUND = 30  # seconds from the engine answering again to every agent running
ENGINE = "docker"  # the execution target id of the Docker backend


def _send_periodic_jobs(stack) -> None:
    stack.send("agents.tasks.probe_engines", queue="periodic")
    stack.send("agents.tasks.monitor_agents", queue="periodic")


def _engine_events() -> list[str]:
    return list(Event.objects.filter(kind__startswith="engine.").order_by("occurred_at").values_list("kind", flat=True))


def _containers_by_agent(client) -> dict[str, list[str]]:
    """Every container on the engine, by its fleet.agent_id label ("" for none)."""
    found: dict[str, list[str]] = {}
    for container in client.containers.list(all=True):
        found.setdefault(container.labels.get("fleet.agent_id", ""), []).append(container.id)
    return found


@pytest.fixture
def private_engine(docker_engine):
    engine = PrivateDocker()
    try:
        engine.start()
        engine.load_image(docker_engine, TEST_IMAGE)
        yield engine
    finally:
        engine.close()


@pytest.fixture
def engine_client(private_engine):
    client = private_engine.client()
    yield client
    client.close()


def test_the_engine_stopped_for_a_minute_and_started(tmp_path, private_engine, engine_client):
    owner = UserFactory()
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}
    engine = engine_client

    with private_stack(tmp_path, private_engine.url, env={}) as stack, \
            procfile_web_server(tmp_path, env=stack.env) as web:
        stack.worker("provision")
        stack.worker("periodic")
        for n in range(AGENTS):
            answer = requests.post(f"{web}/api/agents/deploy", json={"name": f"outage-{n}"}, headers=auth, timeout=30)
            assert answer.status_code == 201, answer.text[:500]
        agents = Agent.objects.filter(owner=owner)
        wait_for(lambda: not agents.exclude(status=Status.RUNNING).exists(), timeout=45,
                 what="both agents running before the outage", stack=stack)
        before = dict(agents.values_list("pk", "container_id"))
        ids = sorted(str(pk) for pk in before)
        stack.send("agents.tasks.probe_engines", queue="periodic")
        wait_for(lambda: requests.get(f"{web}/api/health", timeout=10).json()["checks"]["engines"] == {ENGINE: "ok"},
                 timeout=15, what="the engine probed ok", stack=stack)

        private_engine.stop()
        down = time.monotonic()

        def warned() -> bool:
            _send_periodic_jobs(stack)
            rows = list(agents.values_list("status", "last_error"))
            return all(s == Status.WARNING and e.startswith(engine_reason_prefix(ENGINE)) for s, e in rows)

        wait_for(warned, timeout=20, interval=1, what="both agents warning with the engine's reason", stack=stack)
        while (left := OUTAGE_SECONDS - (time.monotonic() - down)) > 0:
            time.sleep(min(SWEEP_EVERY, left))
            _send_periodic_jobs(stack)
            assert set(agents.values_list("status", flat=True)) == {Status.WARNING}  # never stopped nor error
        time.sleep(2)  # the last jobs sent have run
        for agent_id in ids:
            shown = requests.get(f"{web}/api/agents/{agent_id}", headers=auth, timeout=30).json()
            assert shown["status"] == "warning", shown
            assert shown["last_error"].startswith(f"{engine_reason_prefix(ENGINE)}: "), shown
        assert requests.get(f"{web}/api/health", timeout=30).json()["checks"]["engines"] == {ENGINE: "unreachable"}
        assert _engine_events() == ["engine.unreachable"]  # once for the minute, not once per probe

        private_engine.start()
        back = time.monotonic()

        def recovered() -> bool:
            _send_periodic_jobs(stack)
            return "engine.recovered" in _engine_events() and not agents.exclude(status=Status.RUNNING).exists()

        wait_for(recovered, timeout=RECOVERY_BOUND, interval=1, what="engine.recovered and both agents running",
                 stack=stack)
        recovery = time.monotonic() - back

        assert _engine_events() == ["engine.unreachable", "engine.recovered"]
        assert agents.count() == AGENTS  # nothing lost, nothing doubled
        assert dict(agents.values_list("pk", "container_id")) == before  # the same containers, none made again
        assert _containers_by_agent(engine) == {str(pk): [cid] for pk, cid in before.items()}  # one each, no orphan
        for container_id in before.values():
            assert engine.containers.get(container_id).status == "running"
        judged = Event.objects.filter(agent_id__in=ids, kind__in=["agent.stopped", "agent.error"])
        assert not judged.exists(), list(judged.values_list("kind", "message"))
        assert recovery < RECOVERY_BOUND, f"{recovery:.1f}s (the engine answered in {private_engine.started_in:.1f}s)"
