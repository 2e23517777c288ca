"""Two identical usage posts at the same moment: one accepts, the other counts duplicates."""

from __future__ import annotations

from functools import partial

import pytest
from django.db import connection

from agents.models import AgentSpendDay, AgentSpendMonth, UsageDaily, UsageEvent
from tests.factories.agents import AgentFactory
from tests.support import client_for, run_in_threads

from .helpers import event

pytestmark = pytest.mark.django_db(transaction=True)


def test_two_concurrent_identical_posts_store_each_event_once():
    if connection.vendor != "postgresql":
        pytest.skip("the race needs PostgreSQL's row locks")
    agent = AgentFactory(container_id="", status="stopped")
    batch = [event(cost_usd=0.01) for _ in range(300)]

    def report(client):
        return client.post(f"/api/agents/{agent.id}/usage", {"events": batch}, format="json").json()

    answers = run_in_threads(partial(report, client_for(agent.owner)), partial(report, client_for(agent.owner)))

    assert sorted(a["accepted"] for a in answers) == [0, 300], answers
    assert sorted(a["duplicates"] for a in answers) == [0, 300]
    assert UsageEvent.objects.filter(agent=agent).count() == 300
    assert AgentSpendDay.objects.get(agent=agent).cost_micros == 3_000_000
    assert AgentSpendMonth.objects.get(agent=agent).cost_micros == 3_000_000
    assert sum(UsageDaily.objects.filter(agent=agent).values_list("events", flat=True)) == 300
