"""A reservation on its own: it holds room until it is settled, a call that would cross a
budget inserts nothing and names the tightest budget, and the settings its transaction sets
(commit without waiting for the disk, no bitmap scans) end with it."""

from __future__ import annotations

import uuid

import pytest
from django.db import IntegrityError, connection
from django.utils import timezone

from model_gateway.models import Reservation
from model_gateway.reservations import Shortfall, reserve
from tests.factories.agents import AgentFactory, make_budget

# Committed for real: the settings are local to the reservation's own transaction, which inside
# a test's transaction would be a savepoint.
pytestmark = pytest.mark.django_db(transaction=True)


def _reserve(agent, micros: int):
    return reserve(agent_id=agent.pk, request_id=uuid.uuid4(), worst_micros=micros, now=timezone.now())


def _setting(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute(f"SHOW {name}")
        return cursor.fetchone()[0]


def test_an_open_reservation_holds_room_until_it_is_settled():
    agent = AgentFactory()
    make_budget(agent, limit_usd=0.001)  # 1,000 micro-dollars

    assert _reserve(agent, 600) == 600
    refused = _reserve(agent, 600)
    Reservation.objects.filter(agent=agent).delete()  # settled
    assert _reserve(agent, 600) == 600

    assert refused == Shortfall(budget_id=agent.budgets.get().pk, spent_micros=0, held_micros=600)
    assert Reservation.objects.filter(agent=agent).count() == 1


def test_a_refusal_inserts_nothing_and_names_the_budget_with_the_least_room():
    agent = AgentFactory()
    make_budget(agent, period="monthly", limit_usd=1)
    daily = make_budget(agent, period="daily", limit_usd=0.0005)

    refused = _reserve(agent, 800)

    assert refused == Shortfall(budget_id=daily.pk, spent_micros=0, held_micros=0)
    assert not Reservation.objects.filter(agent=agent).exists()


def test_the_reservations_settings_end_with_its_transaction():
    agent = AgentFactory()
    make_budget(agent, limit_usd=1)
    before = (_setting("synchronous_commit"), _setting("enable_bitmapscan"))

    assert _reserve(agent, 10) == 10

    assert (_setting("synchronous_commit"), _setting("enable_bitmapscan")) == before == ("on", "on")
    assert connection.connection.info.transaction_status == 0  # idle: committed, nothing left open


def test_a_reservation_for_an_agent_deleted_meanwhile_fails_whole_and_leaves_the_connection_usable():
    agent = AgentFactory()
    make_budget(agent, limit_usd=1)
    gone = AgentFactory.build().pk  # never stored: the reservation's agent fails its foreign key at COMMIT

    with pytest.raises(IntegrityError):
        reserve(agent_id=gone, request_id=uuid.uuid4(), worst_micros=10, now=timezone.now())

    assert connection.connection.info.transaction_status == 0
    assert _reserve(agent, 10) == 10
    assert Reservation.objects.count() == 1
