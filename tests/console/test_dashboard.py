"""The fleet dashboard (the console's home): every panel with data, one query per panel (the
same count with 10,000 agents as with a few), and the plumbing tables out of the way."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Agent, AgentSpendDay
from agents.services.engines import engines_probe
from console import dashboard
from console.health import targets_health
from fleet.events import emit
from tests.factories.accounts import AdminFactory, UserFactory
from tests.factories.agents import AgentFactory, make_budget

pytestmark = pytest.mark.django_db

PANELS = (dashboard.agents_by_status, dashboard.agents_needing_attention, dashboard.spend_panel,
          dashboard.budgets_panel, dashboard.recent_events, dashboard.failed_deliveries)


@pytest.fixture
def console():
    client = Client()
    client.force_login(AdminFactory())
    return client


def test_the_dashboard_shows_every_panel_with_data(console, settings):
    settings.DOCKER_HOST = "unix:///nonexistent/fleet-dashboard.sock"
    engines_probe()
    broken = AgentFactory(name="broken-one", status="error", last_error="The image could not be pulled.")
    AgentFactory(name="capped-one", status="stopped", paused_reason="budget_exceeded")
    AgentFactory(status="running")
    make_budget(broken, period="daily", limit_usd=2.0)
    AgentSpendDay.objects.create(agent=broken, day=timezone.now().date(), cost_micros=1_500_000)
    emit("agent.error", message="broken-one failed", agent=broken)

    page = console.get("/admin/").content.decode()

    for panel in ("panel-agents", "panel-spend", "panel-targets", "panel-attention", "panel-events",
                  "panel-deliveries"):
        assert f'id="{panel}"' in page
    assert "broken-one" in page and "capped-one" in page and "The image could not be pulled." in page
    assert "<b>2</b> need attention" in page
    assert "$1.50 of $2.00 in daily budgets" in page
    assert "broken-one failed" in page
    assert "<code>docker</code>" in page and "unreachable" in page  # the engine, probed, is down here
    assert "fleet-dashboard.sock" in page  # with the probe's reason


def test_each_panel_is_one_query_whatever_the_fleet_size():
    owner = UserFactory()
    AgentFactory(owner=owner, status="error")
    few = _queries_per_panel()
    now = timezone.now()
    Agent.objects.bulk_create(
        Agent(name=f"bulk-{i}", owner=owner, status=("running", "warning", "stopped", "error")[i % 4],
              created_at=now - timedelta(seconds=i))
        for i in range(10_000)
    )

    started = time.perf_counter()
    many = _queries_per_panel()
    elapsed = time.perf_counter() - started

    assert few == many == [1] * len(PANELS)
    assert elapsed < 2.0, f"the panels took {elapsed:.2f} s with 10,000 agents"
    assert dashboard.agents_by_status()["attention"] == 5001  # 2,500 warning + 2,500 error + the first


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
