"""GET /workspaces/cost over 1 million usage rows and 1,000 agents (docs/performance.md: at
most 200 ms; the issue: under 500 ms).

1,000 agents in 50 workspaces (every tenth agent in two), 30 days of usage over five models;
the caller is a member of every workspace. Timed twice: the selector alone, and the route
through the whole Django stack (authentication, JSON rendering).
"""

from __future__ import annotations

import os

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench import measure, report

from ._usage_rows import agents_create, table_rows, usage_rows_generate

AGENTS = int(os.environ.get("BENCH_COST_AGENTS", 1000))
WORKSPACES = 50
USAGE_ROWS = int(os.environ.get("BENCH_COST_USAGE_ROWS", 1_000_000))


def _workspaces(owner, agent_ids) -> None:
    from agents.models import WorkspaceAgent
    from workspaces.models import Membership, Workspace

    workspaces = Workspace.objects.bulk_create(Workspace(name=f"ws-{n:02d}", owner=owner) for n in range(WORKSPACES))
    Membership.objects.bulk_create(Membership(workspace=w, user=owner, role="owner") for w in workspaces)
    assignments = [WorkspaceAgent(workspace=workspaces[n % WORKSPACES], agent_id=a) for n, a in enumerate(agent_ids)]
    assignments += [WorkspaceAgent(workspace=workspaces[(n + 1) % WORKSPACES], agent_id=a)
                    for n, a in enumerate(agent_ids) if n % 10 == 0]
    WorkspaceAgent.objects.bulk_create(assignments)


def main() -> None:
    from django.test import Client

    from accounts.tokens import session_token_issue
    from agents.usage.cost import workspace_cost_report
    from agents.usage.window import cost_window_from_query
    from fleet.api.principal import Principal

    owner, agent_ids = agents_create(AGENTS, owner_email="bench-cost@example.com")
    _workspaces(owner, agent_ids)
    seconds = usage_rows_generate(USAGE_ROWS, days=30)
    report("generated", agents=AGENTS, workspaces=WORKSPACES, usage_rows=table_rows("agents_usageevent"),
           daily_rollup_rows=table_rows("agents_usagedaily"), seconds=seconds)

    principal = Principal(user=owner)
    window = cost_window_from_query({}, today=timezone.now().date())
    with CaptureQueriesContext(connection) as captured:
        body = workspace_cost_report(principal=principal, window=window)
    selector = measure(lambda: workspace_cost_report(principal=principal, window=window), repeat=20, warmup=2)
    report("cost report selector, 30 days", median_ms=selector.median_ms, p95_ms=selector.p95_ms,
           queries=len(captured), workspaces=len(body["workspaces"]),
           agent_rows=sum(len(w["perAgent"]) for w in body["workspaces"]),
           unique_fleet_usd=body["uniqueFleetTotalUsd"])

    client = Client(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=owner)}")
    response = client.get("/api/workspaces/cost")
    assert response.status_code == 200, response.content[:300]
    route = measure(lambda: client.get("/api/workspaces/cost"), repeat=20, warmup=2)
    report("GET /api/workspaces/cost, in-process", median_ms=route.median_ms, p95_ms=route.p95_ms,
           body_kb=len(response.content) // 1024)
    custom = measure(lambda: client.get("/api/workspaces/cost?period_days=7"), repeat=20, warmup=2)
    report("GET /api/workspaces/cost?period_days=7", median_ms=custom.median_ms, p95_ms=custom.p95_ms)
