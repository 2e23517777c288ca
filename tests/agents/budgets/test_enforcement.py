"""Enforcement at ingestion and in the sweep: the soft event once per period, the hard pause,
pause failures retried, and one agent's failure never stopping the others."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from agents.apps import AgentsConfig
from agents.budgets.enforcement import budget_pause, budgets_sweep
from agents.models import Agent, Budget
from fleet.celery import app as celery_app
from fleet.models import Event
from tests.agents.usage.helpers import spend
from tests.support import client_for

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 18, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _at_noon(clock):
    clock.move_to(NOW)


@pytest.fixture
def broken_engine(settings, tmp_path):
    settings.DOCKER_HOST = f"unix://{tmp_path}/no-engine.sock"
    return settings


def budget(agent, *, period="daily", limit_usd=10, soft=80) -> Budget:
    # A raw row, not make_budget: budget_upsert acts at once on a cap already reached, and these
    # tests need the ingestion or the sweep to be what acts.
    return Budget.objects.create(agent=agent, period=period, limit_micros=int(limit_usd * 1_000_000),
                                 soft_threshold_pct=Decimal(soft))


def kinds(agent) -> list[str]:
    """The agent's event kinds, sorted (events share the frozen clock's timestamp)."""
    return sorted(Event.objects.filter(agent_id=agent.id).values_list("kind", flat=True))


def budget_kinds(agent) -> list[str]:
    return [k for k in kinds(agent) if k.startswith("agent.budget")]


def running_without_container(tenancy) -> Agent:
    """A running agent whose stop needs no engine call (no container to stop)."""
    return tenancy.agent(status="running", container_id="")


def test_crossing_the_soft_threshold_emits_the_event_once_per_period(tenancy, clock):
    agent = tenancy.agent()
    budget(agent, limit_usd=10)

    spend(agent, 8)
    spend(agent, 1)
    budgets_sweep()
    budgets_sweep()

    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"]
    event = Event.objects.get(agent_id=agent.id, kind="agent.budget_soft_exceeded")
    assert event.workspace_ids == [str(tenancy.workspace.id)]
    assert event.data["budget"]["period"] == "daily"
    assert event.data["budget"]["pct"] == 80

    clock.move_to(NOW + timedelta(days=1))
    spend(agent, 7.99)
    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"]
    spend(agent, 0.01)
    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"] * 2


def test_spend_below_the_soft_threshold_emits_nothing(tenancy):
    agent = tenancy.agent()
    budget(agent, limit_usd=10)

    spend(agent, 7.99)
    budgets_sweep()

    assert budget_kinds(agent) == []


def test_the_sweep_sends_a_soft_event_that_ingestion_did_not(tenancy):
    agent = tenancy.agent()
    spend(agent, 9)  # before any budget existed
    budget(agent, limit_usd=10)

    report = budgets_sweep()

    assert (report.over_soft, report.soft_events) == (1, 1)
    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"]


def test_each_budget_warns_on_its_own(tenancy):
    agent = tenancy.agent()
    budget(agent, period="daily", limit_usd=10)
    budget(agent, period="monthly", limit_usd=100)

    spend(agent, 8.5)
    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"]
    spend(agent, 75)

    assert budget_kinds(agent) == ["agent.budget_soft_exceeded", "agent.budget_soft_exceeded"]


def test_usage_reaching_the_cap_pauses_a_running_agent(tenancy, eager_tasks, django_capture_on_commit_callbacks):
    agent = running_without_container(tenancy)
    budget(agent, limit_usd=10)

    with django_capture_on_commit_callbacks(execute=True):
        spend(agent, 10)

    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("stopped", "budget_exceeded")
    assert kinds(agent) == ["agent.budget_exceeded", "agent.budget_soft_exceeded", "agent.stopped"]


def test_usage_reaching_the_cap_claims_the_pause_before_the_worker_stops_it(
    tenancy, django_capture_on_commit_callbacks
):
    agent = running_without_container(tenancy)
    budget(agent, limit_usd=10)

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        spend(agent, 12)

    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("running", "budget_exceeded")
    assert len(callbacks) == 2  # the soft event's dispatch and the pause task


def test_the_sweep_pauses_a_running_or_warning_agent_over_a_cap(tenancy):
    agents = [running_without_container(tenancy), tenancy.agent(status="warning", container_id="")]
    for agent in agents:
        spend(agent, 15)
        budget(agent, period="weekly", limit_usd=15)

    report = budgets_sweep()

    assert report.paused == 2
    for agent in agents:
        agent.refresh_from_db()
        assert (agent.status, agent.paused_reason) == ("stopped", "budget_exceeded")
        assert "agent.budget_exceeded" in kinds(agent)


@pytest.mark.parametrize("status", ["stopped", "error", "queued", "deploying"])
def test_an_agent_that_is_not_running_is_left_alone(tenancy, status):
    agent = tenancy.agent(status=status, container_id="")
    spend(agent, 20)
    budget(agent, limit_usd=10)

    assert budgets_sweep().paused == 0

    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == (status, None)


def test_an_adopted_agent_is_never_paused(tenancy):
    agent = tenancy.agent(status="running", container_id="", is_external=True, deploy_target="external")
    spend(agent, 20)
    budget(agent, limit_usd=10)

    assert budgets_sweep().paused == 0
    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("running", None)


def test_a_failed_stop_emits_pause_failed_and_the_next_sweep_tries_again(tenancy, broken_engine):
    agent = tenancy.agent(status="running", container_id="c" * 64)  # the stop needs the engine
    spend(agent, 20)
    budget(agent, limit_usd=10)

    first = budgets_sweep()
    second = budgets_sweep()

    assert (first.pause_failed, second.pause_failed) == (1, 1), (first, second)
    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("running", "budget_exceeded")
    failed = Event.objects.filter(agent_id=agent.id, kind="agent.budget_pause_failed")
    assert failed.count() == 2
    assert "could not be reached" in failed.first().data["reason"]


def test_one_agents_failure_never_stops_the_sweep(tenancy, broken_engine):
    failing = tenancy.agent(status="running", container_id="c" * 64, name="a-failing")
    healthy = running_without_container(tenancy)
    for agent in (failing, healthy):
        spend(agent, 20)
        budget(agent, limit_usd=10)

    report = budgets_sweep()

    assert (report.paused, report.pause_failed) == (1, 1)
    healthy.refresh_from_db()
    assert healthy.status == "stopped"


def test_a_manual_start_clears_the_reason_and_the_next_sweep_pauses_again(tenancy):
    agent = running_without_container(tenancy)
    spend(agent, 20)
    budget(agent, limit_usd=10)
    budgets_sweep()
    # What POST /agents/:id/start leaves behind (its engine call is covered by the live test).
    Agent.objects.filter(pk=agent.pk).update(status="running", paused_reason=None)

    assert budgets_sweep().paused == 1

    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("stopped", "budget_exceeded")
    assert budget_kinds(agent).count("agent.budget_exceeded") == 2


def test_a_limit_raised_before_the_worker_runs_cancels_the_pause(tenancy):
    agent = running_without_container(tenancy)
    spend(agent, 20)
    limit = budget(agent, limit_usd=10)
    Agent.objects.filter(pk=agent.pk).update(paused_reason="budget_exceeded")  # claimed at ingestion
    Budget.objects.filter(pk=limit.pk).update(limit_micros=100_000_000)

    assert budget_pause(agent_id=agent.pk) == "skipped"

    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("running", None)


def test_lowering_a_limit_under_the_spend_pauses_at_once(tenancy, eager_tasks, django_capture_on_commit_callbacks):
    agent = running_without_container(tenancy)
    spend(agent, 5)

    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(tenancy.agent_owner).put(f"/api/agents/{agent.id}/budget",
                                                 {"period": "monthly", "limit_usd": 4}, format="json")

    assert response.json()["bucket"] == "hard"
    agent.refresh_from_db()
    assert (agent.status, agent.paused_reason) == ("stopped", "budget_exceeded")


def test_raising_the_limit_arms_the_soft_warning_again(tenancy):
    agent = tenancy.agent()
    client = client_for(tenancy.agent_owner)
    client.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 10}, format="json")
    spend(agent, 8)
    client.put(f"/api/agents/{agent.id}/budget", {"period": "daily", "limit_usd": 20}, format="json")

    spend(agent, 8)

    assert budget_kinds(agent) == ["agent.budget_soft_exceeded"] * 2


def test_the_sweep_reads_every_budget_in_one_query(tenancy, django_assert_num_queries):
    for _ in range(25):
        agent = running_without_container(tenancy)
        spend(agent, 1)
        budget(agent, limit_usd=10)
        budget(agent, period="monthly", limit_usd=100)

    with django_assert_num_queries(1):
        report = budgets_sweep()

    assert report.over_soft == 0


def test_the_sweep_runs_every_minute_from_beat():
    job = next(j for j in AgentsConfig.periodic_tasks if j.task == "agents.budgets.sweep")

    assert job.every_seconds == 60
    assert "agents.budgets.sweep" in celery_app.tasks
    assert "agents.budgets.pause" in celery_app.tasks


def test_a_sweep_with_nothing_new_to_do_only_reads(tenancy, django_assert_num_queries):
    for _ in range(5):
        agent = tenancy.agent()  # stopped: nothing to pause
        spend(agent, 9)
        budget(agent, limit_usd=10)
    assert budgets_sweep().soft_events == 5

    with django_assert_num_queries(2):  # the spend read, then the budgets it found
        report = budgets_sweep()

    assert (report.over_soft, report.soft_events, report.paused) == (5, 0, 0)
