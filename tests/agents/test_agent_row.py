"""agents.selectors._agent_by_id, the hot read of GET /agents/:id: one row by fixed SQL, converted
as the ORM converts it (tests/agents/test_access_matrix.py covers who may read it)."""

from __future__ import annotations

import uuid

import pytest
from django.utils import timezone

from agents.models import Agent
from agents.selectors import _agent_by_id
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db


def fields_of(agent: Agent) -> dict:
    return {field.attname: getattr(agent, field.attname) for field in Agent._meta.concrete_fields}


def test_the_row_reads_as_the_orm_reads_it_every_field_converted():
    stored = AgentFactory(
        gateway_token="tok-secret", vcpu=1.5, paused_reason="budget_exceeded", is_external=True,
        last_handshake_at=timezone.now(), readiness_failures=2, last_error="engine gone",
    )

    read = _agent_by_id(stored.pk)

    assert fields_of(read) == fields_of(Agent.objects.get(pk=stored.pk))
    assert read.gateway_token == "tok-secret"  # decrypted, as the ORM's field does
    assert read._state.adding is False and read._state.db == "default"  # saves as an update
    read.last_error = ""
    read.save(update_fields=["last_error"])
    assert Agent.objects.get(pk=stored.pk).last_error == ""


def test_an_unknown_id_is_none():
    assert _agent_by_id(uuid.uuid4()) is None
