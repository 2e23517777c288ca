"""The exact bodies of POST /agents/:id/usage and GET /workspaces/cost, byte for byte."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import time_machine
from django.utils import timezone

from agents.usage.cost import workspace_cost_report
from agents.usage.serializers import CostReportOut
from agents.usage.window import cost_window_from_query
from fleet.api.principal import Principal
from fleet.api.renderers import dumps
from tests.bodies import assert_body
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from tests.support import client_for

from .helpers import event, spend

pytestmark = pytest.mark.django_db


def test_ingest_answers_accepted_and_duplicates(tenancy):
    agent = tenancy.agent()
    client, url = tenancy.client("key:agents:write"), f"/api/agents/{agent.id}/usage"
    events = [event(request_id="a"), event(request_id="b")]
    client.post(url, {"events": events[:1]}, format="json")

    assert_body(client.post(url, {"events": events}, format="json"), {"accepted": 1, "duplicates": 1})


def per_agent(agent, models: list[dict]) -> dict:
    cost = sum(m["token_cost"] for m in models)
    tokens_in, tokens_out = sum(m["input_tokens"] for m in models), sum(m["output_tokens"] for m in models)
    return {"agentId": str(agent.id), "agentName": agent.name, "token_cost": float(cost), "total_cost": float(cost),
            "input_tokens": tokens_in, "output_tokens": tokens_out, "total_tokens": tokens_in + tokens_out,
            "cost_details": {"tokens": {"models": models}}}


def model(name: str, usd: float) -> dict:
    return {"model": name, "provider": "openai", "input_tokens": 1000, "output_tokens": 500, "total_tokens": 1500,
            "rate_source": "runtime", "token_cost": usd}


def test_the_cost_report(tenancy):
    with time_machine.travel(datetime(2026, 3, 15, 12, tzinfo=UTC), tick=False):
        second = WorkspaceFactory(name="A second", owner=tenancy.owner)
        make_member(second, "viewer", user=tenancy.agent_owner)
        both = tenancy.agent(name="both")
        WorkspaceAgentFactory(workspace=second, agent=both)
        spend(both, 2.0)
        spend(both, 1.0, model="claude-sonnet-4")
        loose = AgentFactory(owner=tenancy.agent_owner, name="loose", status="stopped", container_id="")

        response = client_for(tenancy.agent_owner).get("/api/workspaces/cost")

    both_row = per_agent(both, [model("gpt-4o", 2.0), model("claude-sonnet-4", 1.0)])
    assert_body(response, {
        "periodDays": 30, "periodStart": "2026-02-14", "periodEnd": "2026-03-15",
        "workspaceTotalUsd": 6.0, "uniqueFleetTotalUsd": 3.0,
        "workspaces": [
            {"workspaceId": str(second.id), "workspaceName": "A second", "totalUsd": 3.0, "perAgent": [both_row]},
            {"workspaceId": str(tenancy.workspace.id), "workspaceName": tenancy.workspace.name, "totalUsd": 3.0,
             "perAgent": [both_row]},
        ],
        "unassigned": {"totalUsd": 0.0, "perAgent": [per_agent(loose, [])]},
    })


def test_the_cost_report_is_what_its_documentation_says(tenancy):
    # The report is built as dicts, not through CostReportOut (agents/usage/serializers.py).
    both = tenancy.agent(name="both")
    WorkspaceAgentFactory(workspace=tenancy.other_workspace, agent=both)
    make_member(tenancy.other_workspace, "viewer", user=tenancy.agent_owner)
    spend(both, 2.0)
    spend(both, 1.0, model="claude-sonnet-4")
    spend(AgentFactory(owner=tenancy.agent_owner, name="loose"), 0.25)

    window = cost_window_from_query({}, today=timezone.now().date())
    report = workspace_cost_report(principal=Principal(user=tenancy.agent_owner), window=window)

    assert len(report["workspaces"]) == 2 and report["unassigned"]["perAgent"]
    assert dumps(CostReportOut(report).data) == dumps(report)
