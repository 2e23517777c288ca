"""GET /agents on PostgreSQL: the body the database writes is byte for byte the Python builder's.

agents.selectors.agent_list() builds the rows in Python (orjson writes them); agent_list_body()
has PostgreSQL write the same JSON text. Both run here on the same rows, for every kind of
caller and scope, with values that exercise the encoding (escapes, nulls, floats, timestamps).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

import orjson
import pytest
from django.db import connection

from agents.models import Agent, WorkspaceAgent
from agents.selectors import _listed_assignments, _visible_agents, agent_list, agent_list_body
from agents.selectors_list_sql import agent_list_body_sql
from fleet.api.principal import API_KEY, Principal
from fleet.api.renderers import RenderedJSON, dumps
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.factories.workspaces import WorkspaceFactory, make_member
from workspaces.access import workspace_roles

pytestmark = pytest.mark.django_db

on_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the SQL builder is PostgreSQL's; SQLite uses the Python one"
)

# Floats whose JSON text the two builders must agree on (orjson's form: `1.0`, `0.30000000000000004`).
VCPUS = [0.0, -0.0, 0.25, 1.0, 16.0, 0.1 + 0.2, 1e-4, 0.00123, 2.5, 123456789012345.6, 1 / 3]


def _tricky_data(tenancy):
    """Agents and assignments around the tenancy with every kind of value the body carries."""
    names = ['quote " and \\ backslash', "tab\tnewline\ncontrol\x01\x1f", "accents é and emoji 😀", "del \x7f /"]
    agents = [tenancy.agent(name=name, vcpu=vcpu) for name, vcpu in zip(names * 3, VCPUS)]
    agents[0].paused_reason = "budget_exceeded"
    agents[0].save(update_fields=["paused_reason"])
    # Two workspaces with the same name (order by id among them), one label null, one custom.
    twin_a = WorkspaceFactory(name="twin")
    twin_b = WorkspaceFactory(name="twin")
    odd = WorkspaceFactory(name='odd "name" \\ ü')
    for space in (twin_a, twin_b, odd):
        make_member(space, "admin", user=tenancy.editor)
    unlabelled = WorkspaceAgentFactory(workspace=twin_a, agent=agents[1])
    # The service always writes a label; the column allows none, so clear it by hand.
    WorkspaceAgent.objects.filter(pk=unlabelled.pk).update(role=None)
    WorkspaceAgentFactory(workspace=twin_b, agent=agents[1], role="a \"label\"")
    WorkspaceAgentFactory(workspace=odd, agent=agents[2])
    WorkspaceAgentFactory(workspace=tenancy.other_workspace, agent=agents[3])  # a workspace few see
    # Agents of the editor and of the workspace owner, some shared, some not.
    mine = AgentFactory(owner=tenancy.editor, vcpu=4.0)
    AgentFactory(owner=tenancy.editor, paused_reason="budget_exceeded")
    WorkspaceAgentFactory(workspace=twin_a, agent=mine)
    issuer = AgentFactory(owner=tenancy.owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=issuer)
    AgentFactory()  # nobody's business
    # Timestamps: whole seconds (no fraction written), a few microseconds (leading zeros kept),
    # and two agents created at the same instant (ordered by id, newest first).
    Agent.objects.filter(pk=agents[0].pk).update(created_at=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    Agent.objects.filter(pk=agents[1].pk).update(created_at=datetime(2026, 1, 2, 3, 4, 5, 7, tzinfo=UTC))
    same = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)
    Agent.objects.filter(pk__in=[agents[2].pk, agents[3].pk]).update(created_at=same)


def _key(tenancy, *scopes) -> Principal:
    return Principal(
        user=tenancy.owner, kind=API_KEY, workspace_id=tenancy.workspace.pk, scopes=frozenset(scopes)
    )


CALLERS = ["agent_owner", "editor", "viewer", "admin", "owner", "outsider", "platform_admin"]


@on_postgresql
@pytest.mark.parametrize("scope", ["accessible", "owned"])
@pytest.mark.parametrize("caller", [*CALLERS, "key:agents:read", "key:agents:write"])
def test_the_database_writes_the_same_bytes_as_the_python_builder(tenancy, caller, scope):
    _tricky_data(tenancy)
    if caller.startswith("key:"):
        principal = _key(tenancy, caller[4:])
    else:
        principal = Principal(user=getattr(tenancy, caller))

    expected = dumps(agent_list(principal, scope=scope))
    body = agent_list_body(principal, scope=scope)

    assert type(body) is RenderedJSON
    assert body.content == expected
    if caller in ("editor", "platform_admin") and scope == "accessible":
        assert len(orjson.loads(expected)) >= 10  # the comparison covered real rows


@on_postgresql
def test_the_endpoint_sends_the_databases_bytes_as_json(tenancy):
    _tricky_data(tenancy)
    principal = Principal(user=tenancy.editor)

    response = tenancy.client("editor").get("/api/agents")

    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.content == dumps(agent_list(principal))


@on_postgresql
@pytest.mark.parametrize("vcpu", [1e-7, 1e15, 1e300, math.inf, math.nan])
def test_floats_the_sql_cannot_write_as_orjson_does_fall_back_to_python(tenancy, vcpu):
    tenancy.agent(vcpu=0.5)
    tenancy.agent(vcpu=vcpu)
    principal = Principal(user=tenancy.editor)

    body = agent_list_body(principal)

    assert isinstance(body, list)
    assert dumps(body) == dumps(agent_list(principal))


@on_postgresql
def test_nothing_visible_is_an_empty_array(tenancy):
    tenancy.agent()

    body = agent_list_body(Principal(user=tenancy.outsider))

    assert type(body) is RenderedJSON
    assert body.content == b"[]"


@on_postgresql
def test_the_body_takes_two_queries_whatever_the_numbers(tenancy, django_assert_num_queries):
    _tricky_data(tenancy)
    principal = Principal(user=tenancy.editor)

    with django_assert_num_queries(2):  # the caller's roles, then the body
        agent_list_body(principal)


@on_postgresql
def test_the_sql_builder_answers_none_rather_than_a_different_float(tenancy):
    tenancy.agent(vcpu=1e20)
    principal = Principal(user=tenancy.editor)
    roles = workspace_roles(principal)

    body = agent_list_body_sql(
        agents=_visible_agents(principal),
        assignments=_listed_assignments(principal, roles=roles, owned_only=False),
        roles=roles,
        user_id=tenancy.editor.pk,
        key_role=None,
        admin_floor=None,
    )

    assert body is None


def test_without_postgresql_the_python_builder_answers(tenancy, monkeypatch):
    """Where the SQL builder does not run (SQLite, `make run`), agent_list_body is agent_list."""
    import agents.selectors as selectors

    monkeypatch.setattr(selectors, "_on_postgresql", lambda: False)
    _tricky_data(tenancy)
    principal = Principal(user=tenancy.editor)

    body = agent_list_body(principal)

    assert isinstance(body, list)
    assert dumps(body) == dumps(agent_list(principal))
    assert len(body) >= 10
