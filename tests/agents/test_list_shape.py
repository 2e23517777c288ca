"""GET /agents is built from tuples (agents.selectors._agent_rows), not by a serializer; its
documentation, AgentListItemOut, must say exactly what the builder writes."""

from __future__ import annotations

import pytest

from agents.api.serializers import AgentListItemOut, WorkspaceRefOut
from agents.selectors import LIST_KEYS, agent_list
from fleet.api.principal import Principal
from fleet.api.renderers import dumps

pytestmark = pytest.mark.django_db


@pytest.fixture
def rows(tenancy):
    tenancy.agent(paused_reason="budget_exceeded")
    tenancy.agent(vcpu=0.5)
    return agent_list(Principal(user=tenancy.editor))


def test_the_documented_fields_are_the_keys_the_builder_writes_in_its_order(rows):
    assert [list(row) for row in rows] == [list(LIST_KEYS)] * 2
    assert list(AgentListItemOut().fields) == list(LIST_KEYS)
    assert [list(item) for row in rows for item in row["workspaces"]] == [list(WorkspaceRefOut().fields)] * 2


def test_the_documentation_shapes_the_rows_into_the_same_bytes(rows):
    assert dumps(AgentListItemOut(rows, many=True).data) == dumps(rows)


def test_the_schema_lists_the_builders_keys(client):
    component = client.get("/api/schema/?format=json").json()["components"]["schemas"]["AgentListItemOut"]

    assert list(component["properties"]) == list(LIST_KEYS)
