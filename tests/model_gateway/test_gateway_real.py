"""A real OpenClaw 2026.9.6 and a real Hermes 0.19.0 with `modelRouting: gateway`: their provider
is Fleet (the Procfile's web server on loopback), Fleet calls the loopback fake model with the
saved key. A chat turn is answered; the usage recorded equals the fake model's figures exactly;
the provider key is in neither the container's configuration nor its environment; a hard cap of
one cent refuses the next call before the fake model sees it."""

from __future__ import annotations

import json
import queue
import time

import pytest

from agents.gateway import gateway_readiness
from agents.llm_model.choice import agent_choice
from agents.llm_model.runtime import runtime_model_apply
from agents.models import Agent, RateSource, UsageEvent
from fleet.models import Event
from tests.factories.agents import WorkspaceAgentFactory, make_budget
from tests.infra.asgi import edge_stream
from tests.infra.fake_model import ANSWER, USAGE
from tests.infra.web_server import procfile_web_server
from tests.support import wait_until

from .support import PROVIDER_KEY, price, route_through_gateway

pytestmark = [pytest.mark.runtime, pytest.mark.docker, pytest.mark.django_db(transaction=True),
              pytest.mark.timeout(300)]

READY_WITHIN = 90


@pytest.fixture
def fleet_server(tmp_path, settings, priced_fake_model):
    """Fleet's web server, where the runtimes on the host network reach its /llm/v1."""
    with procfile_web_server(tmp_path, env={"OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "LOG_LEVEL": "WARNING"}) as url:
        settings.FLEET_INTERNAL_URL = url
        yield url


@pytest.fixture
def priced_fake_model(db, fake_model):
    price(fake_model.model_id)
    return fake_model


def _turn(agent: Agent, headers: dict) -> str:
    """One chat turn's events up to `done` or `error`, or as far as they came in a minute."""
    wait_until(lambda: gateway_readiness(agent).ready, timeout=READY_WITHIN, interval=0.5)
    seen = ""
    deadline = time.monotonic() + 60
    with edge_stream("POST", f"/api/agents/{agent.pk}/chat", body=json.dumps({"message": "Hi."}).encode(),
                     headers={**headers, "content-type": "application/json"}) as stream:
        assert stream.status == 200, stream.next_chunk()
        while "event: done" not in seen and "event: error" not in seen and time.monotonic() < deadline:
            try:
                seen += stream.next_chunk(timeout=1).decode()
            except queue.Empty:  # nothing in this second: the turn goes on
                continue
    return seen


def _routed_agent(runtime, tenancy, fake_model, **fields):
    agent = runtime.agent(owner=tenancy.agent_owner, name=f"gw-{runtime.family}", **fields)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    routed = route_through_gateway(agent, base_url=fake_model.base_url, model=fake_model.model_id)
    runtime_model_apply(routed.agent, agent_choice(routed.agent))
    return routed


def _gateway_usage(agent) -> tuple[int, int, int]:
    rows = UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY)
    return (rows.count(), sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows))


def _container_holds(container, text: str) -> bool:
    env = "\n".join(container.attrs["Config"]["Env"] or [])
    files = container.exec_run(["sh", "-c", "cat /state/openclaw.json /state/config.yaml /state/.env 2>/dev/null"])
    return text in env or text in files.output.decode(errors="replace")


def _answered_through_fleet_then_capped(routed, fake_model, tenancy, container):
    headers = {"x-api-key": tenancy.key("agents:write")}
    fake_model.clear()
    seen = _turn(routed.agent, headers)
    assert "event: done" in seen and ANSWER in seen, seen
    calls = len(fake_model.requests)
    assert calls >= 1
    assert fake_model.authorizations == [f"Bearer {PROVIDER_KEY}"] * calls  # Fleet's key, never the token
    wait_until(lambda: _gateway_usage(routed.agent)[0] == calls, timeout=10)
    assert _gateway_usage(routed.agent) == (calls, USAGE["prompt_tokens"] * calls, USAGE["completion_tokens"] * calls)
    assert not UsageEvent.objects.filter(agent=routed.agent).exclude(rate_source=RateSource.GATEWAY).exists()

    container.reload()
    assert not _container_holds(container, PROVIDER_KEY)
    assert _container_holds(container, routed.token)  # the runtime's provider key is its own token

    make_budget(routed.agent, limit_usd=0.01)  # a runtime's call reserves more than a cent: refused
    fake_model.clear()
    refused = _turn(routed.agent, headers)
    assert "event: error" in refused and ANSWER not in refused, refused
    assert fake_model.requests == []  # refused before the provider saw it
    assert Event.objects.filter(kind="agent.budget_exceeded", agent_id=routed.agent.pk,
                                data__refusedAt="gateway").exists()
    spent = sum(UsageEvent.objects.filter(agent=routed.agent).values_list("cost_micros", flat=True))
    assert spent == calls * (USAGE["prompt_tokens"] + 2 * USAGE["completion_tokens"])


def test_openclaw_answers_through_fleet_metered_exactly_without_the_key(openclaw_runtime, fake_model, fleet_server,
                                                                      tenancy):
    routed = _routed_agent(openclaw_runtime, tenancy, fake_model)
    _answered_through_fleet_then_capped(routed, fake_model, tenancy, openclaw_runtime.container)


def test_hermes_answers_through_fleet_metered_exactly_without_the_key(hermes_runtime, fake_model, fleet_server,
                                                                    tenancy, docker_settings):
    routed = _routed_agent(hermes_runtime, tenancy, fake_model, container_id=hermes_runtime.container.id,
                           container_name=hermes_runtime.container.name)
    _answered_through_fleet_then_capped(routed, fake_model, tenancy, hermes_runtime.container)
