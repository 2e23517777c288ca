"""fleet.compiled_query: compiled once, run with new values, rows converted as the ORM converts them."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from agents.models import Agent, AgentModel
from fleet.compiled_query import CompiledRows
from llm.models import ProviderKey
from tests.factories.accounts import UserFactory

pytestmark = pytest.mark.django_db


def test_each_run_takes_its_own_values_and_the_queryset_is_built_once():
    owner = UserFactory()
    first = Agent.objects.create(name="first", owner=owner)
    second = Agent.objects.create(name="second", owner=owner)
    builds = []

    def build(name, agent_id):
        builds.append(name)
        return Agent.objects.filter(name=name, pk=agent_id).values_list("pk", "name")

    named = CompiledRows(build, str, uuid.UUID)
    assert named.rows("first", first.pk) == [(first.pk, "first")]
    assert named.rows("second", second.pk) == [(second.pk, "second")]
    assert named.rows("first", second.pk) == []
    assert len(builds) == 1  # compiled at the first run only


def test_columns_are_converted_as_the_orm_converts_them():
    owner = UserFactory()
    agent = Agent.objects.create(name="converted", owner=owner)
    key = ProviderKey.objects.create(user=owner, provider="openai", label="k", api_key="sk-secret-0123456789")
    AgentModel.objects.create(agent=agent, key=key, name="gpt-4o", fallbacks=["gpt-4o-mini"])
    rows = CompiledRows(lambda agent_id: AgentModel.objects.filter(agent_id=agent_id)
                        .values_list("key__api_key", "fallbacks"), uuid.UUID).rows(agent.pk)
    assert rows == [("sk-secret-0123456789", ["gpt-4o-mini"])]  # decrypted, JSON read


def test_a_query_without_arguments_runs():
    owner = UserFactory()
    Agent.objects.create(name="only", owner=owner)
    assert CompiledRows(lambda: Agent.objects.values_list("name")).rows() == [("only",)]


def test_an_argument_used_twice_fills_both_places_and_a_list_is_one_array_parameter():
    if connection.vendor != "postgresql":
        pytest.skip("= ANY(array) is PostgreSQL's")
    owner, other = UserFactory(), UserFactory()
    mine = Agent.objects.create(name="mine", owner=owner)
    Agent.objects.create(name="named after me", owner=other)
    Agent.objects.create(name="theirs", owner=other)
    twice = CompiledRows(lambda user, name: Agent.objects.filter(Q(owner_id=user) | Q(name=name, owner_id=user))
                         .values_list("name"), uuid.UUID, str)
    assert twice.rows(owner.pk, "named after me") == [("mine",)]
    among = CompiledRows(lambda ids: Agent.objects.filter(
        RawSQL("agents_agent.id = ANY(%s::uuid[])", (ids,), output_field=BooleanField())).values_list("name"), list)
    assert among.rows([str(mine.pk)]) == [("mine",)]
    assert among.rows([]) == []


def test_an_argument_that_does_not_reach_the_sql_as_a_parameter_is_refused():
    owner = UserFactory()
    Agent.objects.create(name="x", owner=owner)
    ignored = CompiledRows(lambda name: Agent.objects.values_list("name"), str)
    with pytest.raises(ValueError, match="must reach its SQL as parameters"):
        ignored.rows("x")
    with pytest.raises(ValueError, match="str, uuid.UUID or list"):
        CompiledRows(lambda n: Agent.objects.filter(vcpu=n).values_list("name"), int)
