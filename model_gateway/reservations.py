"""A call's worst case reserved against every budget of its agent, in one round trip.

Inside one transaction: the agent's budget rows are locked (concurrent calls of one agent
reserve one after the other), then one statement adds up each budget's spend in its current
period, the open reservations and this call, inserts the reservation when no budget would go
over, and returns the budget that would (for the refusal). The lock is its own statement
because a statement reads what was committed when it began: one that locked and summed at once
could miss a reservation committed while it waited for the lock. On PostgreSQL BEGIN, the two
statements and COMMIT go to the database in one write (fleet.postgresql.pipeline).

The lock statement also sets two settings for this transaction alone (no round trip of their own):
- `synchronous_commit` off: a reservation is gone in seconds and lapses by itself, so its
  commit need not wait for the disk (a database crash loses at most the last ones, never its
  consistency);
- bitmap scans off: every call inserts a reservation and its settlement deletes it, so an
  agent's entries in the index are mostly of deleted rows until the table is vacuumed. A plain
  index scan marks those entries dead as it passes them and the next call skips them; a bitmap
  scan (the planner's choice for a few rows) marks nothing and reads all of them again on every
  call: 0.5 ms more at 12,000 deleted rows, growing until a vacuum.

The open reservations and the spend are read in that one statement, from one snapshot: a call
settled meanwhile (its usage in, its reservation out, in one commit) counts once, as one or the
other. SQL of fixed text, prepared once per connection (fleet.postgresql.pipeline): this runs
before every call of an agent with a budget.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction

from agents.budgets.selectors import agent_spend_sql
from agents.models import Budget
from fleet.postgresql.pipeline import in_one_write

from .models import Reservation


@dataclass(frozen=True)
class Shortfall:
    """The budget a call would cross: its spend in the period and what other calls hold."""

    budget_id: uuid.UUID
    spent_micros: int
    held_micros: int


# The transaction's settings (module docstring) in the lock statement's FROM: evaluated once,
# whether or not the agent has budgets.
_LOCK_SETTINGS = ("(SELECT set_config('synchronous_commit', 'off', true), "
                  "set_config('enable_bitmapscan', 'off', true)) AS settings")


def _prep(field: str, value):
    return Reservation._meta.get_field(field).get_db_prep_value(value, connection)


def reserve(*, agent_id: uuid.UUID, request_id: uuid.UUID, worst_micros: int, now: datetime) -> int | Shortfall:
    """The micros reserved, or the Shortfall that refuses the call. Call it for an agent with
    budgets: one whose last budget went meanwhile is reserved for all the same (nothing counts
    the row, and its settlement deletes it)."""
    return reserve_with_read(None, agent_id=agent_id, request_id=request_id, worst_micros=worst_micros, now=now)[0]


def reserve_with_read(read: tuple[str, list] | None, *, agent_id: uuid.UUID, request_id: uuid.UUID,
                      worst_micros: int, now: datetime) -> tuple[int | Shortfall, list[tuple]]:
    """`reserve`, and the rows of `read` (sql, parameters), run first in the same transaction and
    round trip: the model gateway reads the caller with the reservation it expects to need."""
    room = _room_sql(agent_id, now, worst_micros)
    table = connection.ops.quote_name(Reservation._meta.db_table)
    expires = now + timedelta(seconds=settings.MODEL_GATEWAY_RESERVATION_SECONDS)
    row = (f"INSERT INTO {table} (id, agent_id, worst_micros, created_at, expires_at)",
           "SELECT %s, %s, %s, %s, %s WHERE NOT EXISTS (SELECT 1 FROM over)",
           [_prep("id", request_id), _prep("agent", agent_id), worst_micros, _prep("created_at", now),
            _prep("expires_at", expires)])
    reserve_in = _reserve_postgresql if connection.vendor == "postgresql" else _reserve_sqlite
    over, rows = reserve_in(agent_id, room, row, read)
    if over is None:
        return worst_micros, rows
    budget_id, spent, held = over
    return Shortfall(Budget._meta.pk.to_python(budget_id), int(spent), int(held)), rows


def _reserve_postgresql(agent_id, room: tuple[str, list], row: tuple[str, str, list],
                        read: tuple[str, list] | None) -> tuple[tuple | None, list[tuple]]:
    """`read`, the lock, then one statement that inserts the reservation and returns `over` (no
    row: it was inserted), in one transaction sent in one write (fleet.postgresql.pipeline): on
    this kind of machine what is slow is each wait for a process to wake up, more than the
    statements' own work."""
    (room_sql, room_params), (insert, values, values_params) = room, row
    budgets = connection.ops.quote_name(Budget._meta.db_table)
    lock = (f"SELECT b.id FROM {budgets} b, {_LOCK_SETTINGS} WHERE b.agent_id = %s FOR UPDATE OF b",
            [_prep("agent", agent_id)])
    reservation = (f"{room_sql}, inserted AS ({insert} {values}) SELECT over.id, over.spent, over.held FROM over",
                   [*room_params, *values_params])
    *read_rows, _, over = in_one_write([*([read] if read is not None else []), lock, reservation])
    return (over[0] if over else None), (read_rows[0] if read_rows else [])


def _reserve_sqlite(agent_id, room: tuple[str, list], row: tuple[str, str, list],
                    read: tuple[str, list] | None) -> tuple[tuple | None, list[tuple]]:
    """SQLite has one writer at a time (its transaction is the lock) and no INSERT in a WITH
    clause: the insert, then `over` only when nothing was inserted."""
    (room_sql, room_params), (insert, values, values_params) = room, row
    with transaction.atomic(), connection.cursor() as cursor:
        rows = []
        if read is not None:
            cursor.execute(*read)
            rows = cursor.fetchall()
        # INSERT first: SQLite's driver counts the rows of a statement that starts with it.
        cursor.execute(f"{insert} {room_sql} {values}", [*room_params, *values_params])
        if cursor.rowcount == 1:
            return None, rows
        cursor.execute(f"{room_sql} SELECT over.id, over.spent, over.held FROM over", room_params)
        return cursor.fetchone(), rows


def grant(*, agent_id: uuid.UUID, allowance_id: uuid.UUID, target_micros: int, least_micros: int,
          now: datetime, lapses: datetime) -> tuple[int, datetime] | None:
    """An allowance (allowances.py): one reservation row of up to `target_micros`, never more
    than half the room the agent's tightest budget has left, and none when that half is under
    `least_micros`. (micros granted, the budgets' latest change read under their lock), or None.
    PostgreSQL only: elsewhere every call is reserved on its own."""
    if connection.vendor != "postgresql":
        return None
    table, budgets = (connection.ops.quote_name(m._meta.db_table) for m in (Reservation, Budget))
    with_sql, with_params = _held_and_spend_sql(agent_id, now)
    agent = _prep("agent", agent_id)
    lock = (f"SELECT b.id FROM {budgets} b, {_LOCK_SETTINGS} WHERE b.agent_id = %s FOR UPDATE OF b", [agent])
    granted = (
        (f"{with_sql}, half AS (SELECT MIN(spend.limit_micros - spend.spent - held.micros) / 2 AS micros "
         f"FROM spend, held), inserted AS (INSERT INTO {table} (id, agent_id, worst_micros, created_at, expires_at) "
         f"SELECT %s, %s, LEAST(half.micros, %s), %s, %s FROM half WHERE half.micros >= %s RETURNING worst_micros) "
         f"SELECT inserted.worst_micros, (SELECT MAX(updated_at) FROM {budgets} WHERE agent_id = %s) FROM inserted"),
        [*with_params, _prep("id", allowance_id), agent, target_micros, _prep("created_at", now),
         _prep("expires_at", lapses), least_micros, agent])
    _, rows = in_one_write([lock, granted])
    return (int(rows[0][0]), rows[0][1]) if rows else None


def hold_only(reservation_id: uuid.UUID, micros: int) -> None:
    """An allowance's row cut down to what its calls still in flight may cost (gone at none):
    the room it held for calls to come goes back to the agent's budgets."""
    if micros > 0:
        Reservation.objects.filter(pk=reservation_id).update(worst_micros=micros)
    else:
        Reservation.objects.filter(pk=reservation_id).delete()


def _held_and_spend_sql(agent_id, now: datetime) -> tuple[str, list]:
    """A WITH clause of `held`, what the agent's open reservations hold (micros), and `spend`, its
    budgets as rows (id, spent, limit_micros, soft_threshold_pct)."""
    table = connection.ops.quote_name(Reservation._meta.db_table)
    spend_sql, spend_params = agent_spend_sql(agent_id=agent_id, now=now)
    sql = (f"WITH held AS (SELECT COALESCE(SUM(worst_micros), 0) AS micros FROM {table} "
           f"WHERE agent_id = %s AND expires_at > %s), spend AS ({spend_sql})")
    return sql, [_prep("agent", agent_id), _prep("expires_at", now), *spend_params]


def _room_sql(agent_id, now: datetime, worst_micros: int) -> tuple[str, list]:
    """A WITH clause whose `over` is the budget with the least room among those this call
    would cross (none: it fits): (id, spent, held)."""
    with_sql, with_params = _held_and_spend_sql(agent_id, now)
    sql = (
        f"{with_sql}, over AS (SELECT spend.id, spend.spent, held.micros AS held FROM spend, held "
        f"WHERE spend.spent + held.micros + %s > spend.limit_micros "
        f"ORDER BY spend.limit_micros - spend.spent LIMIT 1)"
    )
    return sql, [*with_params, worst_micros]
