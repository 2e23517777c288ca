"""Usage pulled from a real OpenClaw 2026.9.6 and a real Hermes 0.19.0 after chat turns through
the fake model: the route, the service and the 5-minute sweep (one container per family here,
so the module starts OpenClaw once)."""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime

import pytest

from agents.gateway import GatewayDropped, gateway_for
from agents.models import AgentSpendDay, UsageDaily, UsageEvent
from agents.usage.pull import usage_pull
from agents.usage.tasks import usage_pull_all
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.infra.fake_model import USAGE
from tests.infra.runtimes import FAKE_PROVIDER, PRICE_PER_MILLION, free_loopback_port
from tests.support import wait_until

pytestmark = [pytest.mark.runtime, pytest.mark.django_db]

# What one turn of the fake model costs at the fixture's OpenClaw price, in micro-dollars.
MICROS_PER_CALL = round(USAGE["prompt_tokens"] * PRICE_PER_MILLION["input"]
                        + USAGE["completion_tokens"] * PRICE_PER_MILLION["output"])


SETTLED_POLLS = 3  # a count that holds over three polls a second apart has caught up


def _today():
    return datetime.now(UTC).date()


def _calls(gateway, model_id: str, provider: str | None = None) -> int:
    """The runtime's call count for the fake model today, as its usage reports it now."""
    usage = gateway.usage(_today())
    rows = [r for r in usage.rows if r.model == model_id and provider in (None, r.provider)]
    return sum(r.calls for r in rows) if usage.complete else -1


def _recorded(agent, model_id: str) -> UsageDaily:
    return UsageDaily.objects.get(agent=agent, day=_today(), model=model_id)


@pytest.fixture(scope="module")
def openclaw_turns():
    """Turns run on this module's OpenClaw so far (each one model call: no tools are offered)."""
    return [0]


def _openclaw_turn(agent, fake_model, turns: list[int], conversation: str) -> int:
    """One turn, then the runtime's own count of calls once it shows the turn and holds still.
    OpenClaw's figures lag a run by seconds even when it says they are complete (measured: up to
    ~15 s), and the count is the runtime's: what a pull must record, whatever calls a turn made."""
    gateway = gateway_for(agent)
    asked = len(fake_model.requests)
    gateway.send_message("Say something.", conversation=conversation)
    fake_model.wait_for(asked + 1, timeout=60)  # the turn reached the model
    seen: list[int] = []

    def settled() -> int | None:
        try:
            seen.append(_calls(gateway, fake_model.model_id, FAKE_PROVIDER))
        except GatewayDropped:  # sessions.usage past its 10 s on a busy machine: a poll without a figure
            return None
        steady = len(seen) >= SETTLED_POLLS and len(set(seen[-SETTLED_POLLS:])) == 1
        return seen[-1] if steady and seen[-1] > turns[0] else None

    try:
        turns[0] = wait_until(settled, timeout=90, interval=1)
    except AssertionError:
        raise AssertionError(f"OpenClaw's count of calls did not settle above {turns[0]}: {seen}; "
                             f"the model was asked {len(fake_model.requests)} times") from None
    return turns[0]


def _openclaw_has_turns(agent, fake_model, turns: list[int], conversation: str) -> int:
    """The module's runtime has counted at least one turn (an earlier test's, else a new one):
    each OpenClaw turn costs up to half a minute before its figures show, so tests that only
    need figures to exist share them. A fresh agent row starts with nothing recorded."""
    return turns[0] or _openclaw_turn(agent, fake_model, turns, conversation)


def test_an_operator_pulls_openclaws_priced_tokens_once_and_the_reports_see_them(openclaw_runtime, fake_model,
                                                                                openclaw_turns, tenancy):
    agent = openclaw_runtime.agent(owner=tenancy.agent_owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    calls = _openclaw_turn(agent, fake_model, openclaw_turns, "pull-api")
    editor = tenancy.client("editor")

    first = editor.post(f"/api/agents/{agent.id}/usage/pull")
    again = editor.post(f"/api/agents/{agent.id}/usage/pull")

    assert first.status_code == 200, first.content
    assert first.json() == {"pulled": 1, "unchanged": 0}
    assert again.json() == {"pulled": 0, "unchanged": 1}
    daily = _recorded(agent, fake_model.model_id)
    assert (daily.provider, daily.rate_source) == (FAKE_PROVIDER, "runtime")  # OpenClaw's configured price
    assert (daily.input_tokens, daily.output_tokens) == (USAGE["prompt_tokens"] * calls,
                                                         USAGE["completion_tokens"] * calls)
    assert daily.cost_micros == MICROS_PER_CALL * calls
    assert UsageEvent.objects.filter(agent=agent).count() == 1

    report = tenancy.client("owner").get("/api/workspaces/cost?period_days=1").json()
    (row,) = [a for w in report["workspaces"] for a in w["perAgent"] if a["agentId"] == str(agent.id)]
    assert row["input_tokens"] == USAGE["prompt_tokens"] * calls
    assert row["token_cost"] == pytest.approx(MICROS_PER_CALL * calls / 1e6)
    owner = tenancy.client("agent_owner")
    owner.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 100}, format="json")
    (budget,) = owner.get(f"/api/agents/{agent.id}/budget").json()["budgets"]
    assert budget["currentUsd"] == pytest.approx(MICROS_PER_CALL * calls / 1e6)


def test_a_later_turn_adds_only_its_own_tokens(openclaw_runtime, fake_model, openclaw_turns):
    agent = openclaw_runtime.agent()
    before = _openclaw_has_turns(agent, fake_model, openclaw_turns, "pull-growth")
    assert usage_pull(agent=agent).pulled == 1  # the turns so far are recorded

    after = _openclaw_turn(agent, fake_model, openclaw_turns, "pull-growth")
    result = usage_pull(agent=agent)

    assert after > before and result.pulled == 1
    daily = _recorded(agent, fake_model.model_id)
    assert (daily.input_tokens, daily.cost_micros) == (USAGE["prompt_tokens"] * after, MICROS_PER_CALL * after)
    assert AgentSpendDay.objects.get(agent=agent, day=_today()).cost_micros == MICROS_PER_CALL * after


def test_hermes_tokens_are_pulled_from_its_sessions(hermes_runtime, fake_model):
    agent = hermes_runtime.agent()
    gateway = gateway_for(agent)
    gateway.send_message("Hello.", conversation="pull-hermes")
    calls = _calls(gateway, fake_model.model_id)  # Hermes counts a turn as it ends
    assert calls >= 1

    result = usage_pull(agent=agent)

    assert (result.pulled, result.unchanged) == (1, 0)
    daily = _recorded(agent, fake_model.model_id)
    assert (daily.input_tokens, daily.output_tokens) == (USAGE["prompt_tokens"] * calls,
                                                         USAGE["completion_tokens"] * calls)
    assert daily.rate_source != "runtime"  # Hermes prices nothing; the rate book decides
    assert usage_pull(agent=agent).pulled == 0


def test_one_sweep_pulls_every_running_agent_and_logs_a_failure_without_its_token(
        openclaw_runtime, hermes_runtime, fake_model, openclaw_turns, caplog):
    openclaw_agent, hermes_agent = openclaw_runtime.agent(), hermes_runtime.agent()
    gateway_for(hermes_agent).send_message("Hello.", conversation="pull-sweep")
    _openclaw_has_turns(openclaw_agent, fake_model, openclaw_turns, "pull-sweep")
    token = secrets.token_urlsafe(32)
    silent = AgentFactory(runtime_family="hermes", status="running", gateway_token=token,
                          gateway_host_port=free_loopback_port())  # nothing listens there
    stopped = AgentFactory(runtime_family="openclaw", status="stopped", gateway_token=openclaw_runtime.token,
                           gateway_host_port=openclaw_runtime.port)  # reachable, but not Fleet's to pull

    with caplog.at_level(logging.INFO, logger="agents.usage"):
        counts = usage_pull_all()  # the beat task's body, run here

    assert counts == {"agents": 3, "pulled": 2, "unchanged": 0, "failed": 1}
    assert _recorded(openclaw_agent, fake_model.model_id).rate_source == "runtime"
    assert _recorded(hermes_agent, fake_model.model_id).input_tokens > 0
    assert not UsageEvent.objects.filter(agent__in=[silent, stopped]).exists()
    assert f"Usage pull of agent {silent.pk} failed" in caplog.text
    assert token not in caplog.text and openclaw_runtime.token not in caplog.text
