"""The fleet dashboard (the console's home): every panel with data, one query per panel (the
same count with 10,000 agents as with a few), and the plumbing tables out of the way."""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.budgets.periods import month_start
from agents.budgets.selectors import budget_counts, budget_states
from agents.models import Agent, AgentSpendDay, AgentSpendMonth, Budget
from agents.services.engine_probe import engines_probe
from agents.usage.store import spend_rollups_add
from console import dashboard
from console.health import targets_health
from fleet.events import emit
from tests.factories.accounts import UserFactory
from tests.factories.agents import AgentFactory, make_budget

pytestmark = pytest.mark.django_db

PANELS = (dashboard.agents_by_status, dashboard.agents_needing_attention, dashboard.spend_panel,
          dashboard.budgets_panel, dashboard.top_spenders, dashboard.recent_events, dashboard.failed_deliveries)


def _spend(agent, usd: float, *, day=None) -> None:
    """`usd` spent by `agent` on `day` (today), folded into the spend rollups as ingestion does."""
    spend_rollups_add(agent_id=agent.pk, spend={day or timezone.now().date(): round(usd * 1_000_000)})


def test_the_dashboard_shows_every_panel_with_data(console, settings):
    settings.DOCKER_HOST = "unix:///nonexistent/fleet-dashboard.sock"
    engines_probe()
    broken = AgentFactory(name="broken-one", status="error", last_error="The image could not be pulled.")
    capped = AgentFactory(name="capped-one", status="stopped", paused_reason="budget_exceeded")
    AgentFactory(status="running")
    make_budget(broken, period="daily", limit_usd=2.0)  # 85 % spent: past its soft threshold (80 %)
    make_budget(capped, period="monthly", limit_usd=1.0)  # 120 %: exceeded
    _spend(broken, 1.70)
    _spend(capped, 1.20)
    emit("agent.error", message="broken-one failed", agent=broken)

    page = console.get("/admin/").content.decode()

    for panel in ("panel-agents", "panel-spend", "panel-budgets", "panel-top-spenders", "panel-targets",
                  "panel-attention", "panel-events", "panel-deliveries"):
        assert f'id="{panel}"' in page
    assert "broken-one" in page and "capped-one" in page and "The image could not be pulled." in page
    assert "<b>2</b> need attention" in page
    assert "<dt>Today</dt><dd>$2.90</dd>" in page and "<dt>This month</dt><dd>$2.90</dd>" in page
    assert "2 budgets</a>" in page and "<b>1</b> past the soft threshold" in page and "<b>1</b> exceeded" in page
    top = page[page.index('id="panel-top-spenders"'):page.index('id="panel-attention"')]
    assert top.index("broken-one") < top.index("capped-one")  # most first
    assert "$1.20</td>" in top and "$1.00</td>" in top and "120.0 %" in top  # against its monthly budget
    assert "none</td>" in top  # broken-one has no monthly budget
    assert "broken-one failed" in page
    assert "<code>docker</code>" in page and "unreachable" in page  # the engine, probed, is down here
    assert "fleet-dashboard.sock" in page  # with the probe's reason


def test_budget_counts_are_the_budgets_own_buckets_for_their_current_period():
    agents = AgentFactory.create_batch(5)
    make_budget(agents[0], period="daily", limit_usd=10)  # none: nothing spent
    make_budget(agents[1], period="daily", limit_usd=10, soft_threshold_pct=50)  # soft: 60 %
    make_budget(agents[2], period="weekly", limit_usd=1)  # hard: 100 % exactly
    make_budget(agents[3], period="monthly", limit_usd=5)  # none: yesterday's spend counts, 20 %
    make_budget(agents[4], period="daily", limit_usd=1)  # none: its spend was yesterday
    now = datetime(2026, 11, 18, 12, tzinfo=UTC)  # a Wednesday: yesterday is in the same week and month
    yesterday = (now - timedelta(days=1)).date()
    _spend(agents[1], 6, day=now.date())
    _spend(agents[2], 1, day=now.date())
    _spend(agents[3], 1, day=yesterday)
    _spend(agents[4], 5, day=yesterday)

    counts = budget_counts(now=now)

    buckets = Counter(state.bucket for state in budget_states(now=now))
    assert (counts.total, counts.soft, counts.exceeded) == (5, 1, 1)
    assert (buckets["soft"], buckets["hard"]) == (counts.soft, counts.exceeded)


def test_the_top_spenders_are_this_months_five_biggest_with_their_monthly_budget():
    now = timezone.now()
    agents = [AgentFactory(name=f"spender-{n}") for n in range(7)]
    for n, agent in enumerate(agents):
        _spend(agent, n + 1, day=now.date())
    _spend(agents[0], 100, day=(now.replace(day=1) - timedelta(days=1)).date())  # last month: not counted
    make_budget(agents[6], period="monthly", limit_usd=14)
    make_budget(agents[5], period="daily", limit_usd=1)  # not a monthly budget

    top = dashboard.top_spenders(now=now)

    assert [row.agent_name for row in top] == ["spender-6", "spender-5", "spender-4", "spender-3", "spender-2"]
    assert (top[0].spent_usd, top[0].monthly_limit_usd, top[0].pct) == (7.0, 14.0, 50.0)
    assert (top[1].monthly_limit_usd, top[1].pct) == (None, None)


def test_each_panel_is_one_query_whatever_the_fleet_size():
    owner = UserFactory()
    AgentFactory(owner=owner, status="error")
    few = _queries_per_panel()
    now = timezone.now()
    agents = Agent.objects.bulk_create(
        Agent(name=f"bulk-{i}", owner=owner, status=("running", "warning", "stopped", "error")[i % 4],
              created_at=now - timedelta(seconds=i))
        for i in range(10_000)
    )
    # Every agent spent today and yesterday, and has a monthly budget: 20,000 day rows, and their
    # months as the rollup keeps them.
    days = [now.date(), (now - timedelta(days=1)).date()]
    AgentSpendDay.objects.bulk_create(
        AgentSpendDay(agent=agent, day=day, cost_micros=(i % 50 + 1) * 100_000)
        for i, agent in enumerate(agents) for day in days
    )
    months = Counter()
    for i, agent in enumerate(agents):
        for day in days:
            months[(agent.pk, month_start(day))] += (i % 50 + 1) * 100_000
    AgentSpendMonth.objects.bulk_create(AgentSpendMonth(agent_id=agent_id, month=month, cost_micros=cost)
                                        for (agent_id, month), cost in months.items())
    Budget.objects.bulk_create(Budget(agent=agent, period="monthly", limit_micros=(i % 3 + 1) * 2_000_000)
                               for i, agent in enumerate(agents))

    started = time.perf_counter()
    many = _queries_per_panel()
    elapsed = time.perf_counter() - started

    assert few == many == [1] * len(PANELS)
    assert elapsed < 2.0, f"the panels took {elapsed:.2f} s with 10,000 agents"
    assert dashboard.agents_by_status()["attention"] == 5001  # 2,500 warning + 2,500 error + the first
    counts = dashboard.budgets_panel()
    assert counts.total == 10_000 and counts.soft + counts.exceeded > 0
    assert [row.spent_usd for row in dashboard.top_spenders()] == [10.0] * 5  # 2 days of $5.00


def _queries_per_panel() -> list[int]:
    counts = []
    for panel in PANELS:
        with CaptureQueriesContext(connection) as queries:
            panel()
        counts.append(len(queries))
    return counts


def test_the_targets_panel_reads_the_last_probe_and_never_probes_itself(settings):
    assert {row.target_id: row.state for row in targets_health()} == {"docker": "unknown"}  # never probed

    settings.DOCKER_HOST = "unix:///nonexistent/fleet-dashboard.sock"
    engines_probe()
    settings.DOCKER_HOST = "unix:///nonexistent/another.sock"  # a probe now would name this one

    (docker,) = targets_health()
    assert docker.state == "unreachable" and "fleet-dashboard.sock" in docker.detail
    assert docker.deploy_target == "docker"


@pytest.mark.parametrize("url", [
    "/admin/auth/group/", "/admin/django_celery_beat/crontabschedule/", "/admin/django_celery_beat/intervalschedule/",
    "/admin/django_celery_beat/solarschedule/", "/admin/django_celery_beat/clockedschedule/",
    "/admin/social_django/usersocialauth/", "/admin/social_django/nonce/", "/admin/social_django/association/",
])
def test_django_plumbing_is_out_of_the_way(console, url):
    assert console.get(url).status_code == 404


def test_the_periodic_tasks_stay_reachable(console):
    assert console.get("/admin/django_celery_beat/periodictask/").status_code == 200
