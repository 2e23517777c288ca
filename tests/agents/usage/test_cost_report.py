"""GET /workspaces/cost: totals, per-agent rows with models, windows, and who sees what."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from tests.support import client_for

from .helpers import spend

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 15, 12, 0, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _at_noon(clock):
    clock.move_to(NOW)


@pytest.fixture
def fleet(tenancy):
    """Agent `both` in tenancy.workspace and a second workspace; `solo` in tenancy.workspace only;
    `loose` owned by tenancy.agent_owner and in no workspace; `foreign` in other_workspace."""
    second = WorkspaceFactory(name="Second", owner=tenancy.owner)
    make_member(second, "viewer", user=tenancy.agent_owner)
    both = tenancy.agent(name="both")
    WorkspaceAgentFactory(workspace=second, agent=both)
    solo = tenancy.agent(name="solo")
    loose = AgentFactory(owner=tenancy.agent_owner, name="loose", status="stopped", container_id="")
    foreign = AgentFactory(name="foreign", status="stopped", container_id="")
    WorkspaceAgentFactory(workspace=tenancy.other_workspace, agent=foreign)
    spend(both, 2.0)
    spend(both, 1.0, model="claude-sonnet-4")
    spend(solo, 0.5)
    spend(loose, 4.0)
    spend(foreign, 100.0)
    return {"second": second, "both": both, "solo": solo, "loose": loose, "foreign": foreign}


def report(client, **params):
    return client.get("/api/workspaces/cost", params)


def test_an_agent_in_two_workspaces_counts_in_each_but_once_in_the_fleet(tenancy, fleet):
    body = report(client_for(tenancy.agent_owner)).json()

    totals = {w["workspaceName"]: w["totalUsd"] for w in body["workspaces"]}
    assert totals == {tenancy.workspace.name: 3.5, "Second": 3.0}
    assert body["workspaceTotalUsd"] == 6.5
    assert body["unassigned"]["totalUsd"] == 4.0
    assert body["uniqueFleetTotalUsd"] == 7.5  # both 3 + solo 0.5 + loose 4, each once
    assert body["periodDays"] == 30


def test_a_per_agent_row_has_the_totals_and_the_per_model_breakdown(tenancy, fleet):
    body = report(client_for(tenancy.agent_owner)).json()

    workspace = next(w for w in body["workspaces"] if w["workspaceId"] == str(tenancy.workspace.id))
    row = workspace["perAgent"][0]
    assert row["agentId"] == str(fleet["both"].id)
    assert (row["agentName"], row["token_cost"], row["total_cost"]) == ("both", 3.0, 3.0)
    assert (row["input_tokens"], row["output_tokens"], row["total_tokens"]) == (2000, 1000, 3000)
    assert row["cost_details"]["tokens"]["models"] == [
        {"model": "gpt-4o", "provider": "openai", "input_tokens": 1000, "output_tokens": 500,
         "total_tokens": 1500, "rate_source": "runtime", "token_cost": 2.0},
        {"model": "claude-sonnet-4", "provider": "openai", "input_tokens": 1000, "output_tokens": 500,
         "total_tokens": 1500, "rate_source": "runtime", "token_cost": 1.0},
    ]
    assert [r["agentName"] for r in workspace["perAgent"]] == ["both", "solo"]


def test_an_assigned_agent_without_usage_is_listed_with_zeros(tenancy, fleet):
    idle = tenancy.agent(name="idle")

    body = report(client_for(tenancy.agent_owner)).json()

    workspace = next(w for w in body["workspaces"] if w["workspaceId"] == str(tenancy.workspace.id))
    row = next(r for r in workspace["perAgent"] if r["agentId"] == str(idle.id))
    assert (row["total_cost"], row["total_tokens"], row["cost_details"]["tokens"]["models"]) == (0, 0, [])


def test_the_window_counts_whole_utc_days_and_today(tenancy, fleet):
    spend(fleet["solo"], 10.0, occurred_at=datetime(2026, 3, 14, 23, 59, tzinfo=UTC))
    spend(fleet["solo"], 20.0, occurred_at=datetime(2026, 2, 13, 0, 0, tzinfo=UTC))  # 30 days before today

    def solo_cost(**params):
        body = report(client_for(tenancy.agent_owner), **params).json()
        workspace = next(w for w in body["workspaces"] if w["workspaceId"] == str(tenancy.workspace.id))
        return next(r["total_cost"] for r in workspace["perAgent"] if r["agentName"] == "solo")

    assert solo_cost(period_days=1) == 0.5
    assert solo_cost(period_days=2) == 10.5
    assert solo_cost(period_days=30) == 10.5
    assert solo_cost(period_days=31) == 30.5
    assert solo_cost(period_start="2026-02-13", period_end="2026-02-13") == 20.0
    assert solo_cost(period_start="2026-02-14", period_end="2026-03-14") == 10.0


def test_custom_dates_report_their_number_of_days(tenancy, fleet):
    body = report(client_for(tenancy.agent_owner), period_start="2026-01-01", period_end="2026-12-31").json()

    assert (body["periodDays"], body["periodStart"], body["periodEnd"]) == (365, "2026-01-01", "2026-12-31")


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"period_days": "0"}, "period_days"),
        ({"period_days": "366"}, "period_days"),
        ({"period_days": "-1"}, "period_days"),
        ({"period_days": "7.5"}, "period_days"),
        ({"period_days": "week"}, "period_days"),
        ({"period_start": "2026-01-01"}, "period_end"),
        ({"period_end": "2026-01-01"}, "period_start"),
        ({"period_start": "2026-1-1", "period_end": "2026-01-02"}, "period_start"),
        ({"period_start": "2026-02-30", "period_end": "2026-03-02"}, "period_start"),
        ({"period_start": "2026-01-01T00:00:00Z", "period_end": "2026-01-02"}, "period_start"),
        ({"period_start": "2026-03-02", "period_end": "2026-03-01"}, "period_start"),
        ({"period_start": "2024-01-01", "period_end": "2025-01-01"}, "period_end"),  # 367 days
    ],
)
def test_a_bad_period_is_a_400_naming_the_field(tenancy, params, field):
    response = report(client_for(tenancy.agent_owner), **params)

    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert field in response.json()["fields"]


def test_366_custom_days_are_allowed(tenancy):
    response = report(client_for(tenancy.agent_owner), period_start="2024-01-01", period_end="2024-12-31")

    assert (response.status_code, response.json()["periodDays"]) == (200, 366)


def test_a_key_with_workspaces_read_gets_only_its_workspace_and_no_unassigned(tenancy, fleet):
    body = report(client_for(api_key=tenancy.key("workspaces:read"))).json()

    assert [w["workspaceId"] for w in body["workspaces"]] == [str(tenancy.workspace.id)]
    assert body["unassigned"] == {"totalUsd": 0, "perAgent": []}
    assert (body["workspaceTotalUsd"], body["uniqueFleetTotalUsd"]) == (3.5, 3.5)


def test_a_key_never_counts_a_remote_docker_agent_a_session_assigned_to_its_workspace(tenancy, fleet):
    remote = tenancy.agent(name="on-my-host", deploy_target="remote-docker", execution_target_id="remote:h1")
    spend(remote, 7.0)

    by_key = report(client_for(api_key=tenancy.key("workspaces:read"))).json()
    by_session = report(client_for(tenancy.owner)).json()

    key_rows = {row["agentName"] for row in by_key["workspaces"][0]["perAgent"]}
    assert "on-my-host" not in key_rows and by_key["workspaceTotalUsd"] == 3.5  # as without it
    session_rows = next(w for w in by_session["workspaces"] if w["workspaceId"] == str(tenancy.workspace.id))
    assert "on-my-host" in {row["agentName"] for row in session_rows["perAgent"]}


@pytest.mark.parametrize("scopes", [("agents:read",), ("agents:read", "agents:write")])
def test_a_key_without_workspaces_read_is_refused(tenancy, scopes):
    response = report(client_for(api_key=tenancy.key(*scopes)))

    assert (response.status_code, response.json()["code"]) == (403, "missing_scope")


def test_without_a_credential_it_is_401(tenancy):
    assert report(client_for()).status_code == 401


@pytest.mark.parametrize("who", ["viewer", "editor", "admin", "owner"])
def test_every_member_role_sees_the_workspace(tenancy, fleet, who):
    body = report(client_for(getattr(tenancy, who))).json()

    assert str(tenancy.workspace.id) in [w["workspaceId"] for w in body["workspaces"]]


def test_an_outsider_sees_their_own_workspace_and_none_of_others(tenancy, fleet):
    body = report(client_for(tenancy.outsider)).json()

    assert [w["workspaceId"] for w in body["workspaces"]] == [str(tenancy.other_workspace.id)]
    assert body["unassigned"]["perAgent"] == []
    assert body["uniqueFleetTotalUsd"] == 100.0  # the foreign agent only


def test_a_member_does_not_see_other_users_unassigned_agents(tenancy, fleet):
    body = report(client_for(tenancy.editor)).json()

    assert body["unassigned"]["perAgent"] == []
    assert fleet["foreign"].id not in [r["agentId"] for w in body["workspaces"] for r in w["perAgent"]]


def test_the_owner_sees_only_their_own_unassigned_agents(tenancy, fleet):
    body = report(client_for(tenancy.agent_owner)).json()

    assert [r["agentName"] for r in body["unassigned"]["perAgent"]] == ["loose"]


def test_a_platform_admin_lists_member_workspaces_only(tenancy, fleet):
    body = report(client_for(tenancy.platform_admin)).json()

    assert body["workspaces"] == []


def test_the_report_reads_a_constant_number_of_queries(tenancy, fleet, django_assert_max_num_queries):
    for n in range(20):
        spend(tenancy.agent(name=f"more-{n}"), 0.1)
    client = client_for(tenancy.agent_owner)

    with django_assert_max_num_queries(6):
        assert report(client).status_code == 200


def test_a_key_of_another_workspace_sees_only_that_workspace(tenancy, fleet):
    body = report(client_for(api_key=tenancy.key("workspaces:read", workspace=tenancy.other_workspace))).json()

    assert [w["workspaceId"] for w in body["workspaces"]] == [str(tenancy.other_workspace.id)]
    assert [r["agentName"] for r in body["workspaces"][0]["perAgent"]] == ["foreign"]
    assert body["uniqueFleetTotalUsd"] == 100.0
