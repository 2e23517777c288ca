"""A call's worst case reserved against every budget of its agent, in two short statements.

Inside one transaction: the agent's budget rows are locked (concurrent calls of one agent
reserve one after the other), then one statement adds up each budget's spend in its current
period, the open reservations and this call, and inserts the reservation when no budget would go
over (when one would, a second read says which, for the refusal). The lock is its own statement
because a statement reads what was committed when it began: one that locked and summed at once
could miss a reservation committed while it waited for the lock.

The open reservations and the spend are read in that one statement, from one snapshot: a call
settled meanwhile (its usage in, its reservation out, in one commit) counts once, as one or the
other. SQL of fixed text (the lock compiled once: fleet.compiled_query): this runs before every
call of an agent with a budget.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from agents.budgets.selectors import agent_spend_sql
from agents.models import Budget
from fleet.compiled_query import CompiledRows
from fleet.postgresql.prepared import prepared_statements

from .models import Reservation


@dataclass(frozen=True)
class Shortfall:
    """The budget a call would cross: its spend in the period and what other calls hold."""

    budget_id: uuid.UUID
    spent_micros: int
    held_micros: int


_budget_lock = CompiledRows(
    lambda agent_id: Budget.objects.select_for_update().filter(agent_id=agent_id).values_list("pk"), uuid.UUID)


def _prep(field: str, value):
    return Reservation._meta.get_field(field).get_db_prep_value(value, connection)


def reserve(*, agent_id: uuid.UUID, request_id: uuid.UUID, worst_micros: int, now: datetime) -> int | Shortfall:
    """The micros reserved (0: the agent has no budget), or the Shortfall that refuses the call."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # A reservation is gone in seconds and lapses by itself: it need not wait for the
            # disk (a database crash loses at most the last ones, never its consistency).
            with connection.cursor() as cursor:
                cursor.execute("SET LOCAL synchronous_commit TO OFF")
        if not _budget_lock.rows(agent_id):
            return 0
        room, params = _room_sql(agent_id, now, worst_micros)
        table = connection.ops.quote_name(Reservation._meta.db_table)
        expires = now + timedelta(seconds=settings.MODEL_GATEWAY_RESERVATION_SECONDS)
        with prepared_statements(), connection.cursor() as cursor:
            cursor.execute(
                # INSERT first: SQLite's driver counts the rows of a statement that starts with it.
                f"INSERT INTO {table} (id, agent_id, worst_micros, created_at, expires_at) "
                f"{room} SELECT %s, %s, %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM over)",
                [*params, _prep("id", request_id), _prep("agent", agent_id), worst_micros, _prep("created_at", now),
                 _prep("expires_at", expires)],
            )
            if cursor.rowcount == 1:
                return worst_micros
            cursor.execute(f"{room} SELECT over.id, over.spent, over.held FROM over", params)
            over, spent, held = cursor.fetchone()
    return Shortfall(Budget._meta.pk.to_python(over), int(spent), int(held))


def _room_sql(agent_id, now: datetime, worst_micros: int) -> tuple[str, list]:
    """A WITH clause whose `over` is the budget with the least room among those this call
    would cross (none: it fits): (id, spent, held)."""
    table = connection.ops.quote_name(Reservation._meta.db_table)
    spend_sql, spend_params = agent_spend_sql(agent_id=agent_id, now=now)
    sql = (
        f"WITH held AS (SELECT COALESCE(SUM(worst_micros), 0) AS micros FROM {table} "
        f"WHERE agent_id = %s AND expires_at > %s), spend AS ({spend_sql}), "
        f"over AS (SELECT spend.id, spend.spent, held.micros AS held FROM spend, held "
        f"WHERE spend.spent + held.micros + %s > spend.limit_micros "
        f"ORDER BY spend.limit_micros - spend.spent LIMIT 1)"
    )
    return sql, [_prep("agent", agent_id), _prep("expires_at", now), *spend_params, worst_micros]
