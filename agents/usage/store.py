"""Writing usage: raw events with ON CONFLICT DO NOTHING, then additive UPSERTs of the rollups.

`RETURNING` tells exactly which events this statement inserted, so a duplicate (an earlier
post, or a concurrent identical one that committed first: the second insert waits on the
unique index and then skips) is never counted nor rolled up twice. Rows are written in a
fixed order (request id; rollup key) so that concurrent batches lock in the same order and
cannot deadlock. PostgreSQL inserts the events from column arrays (unnest); elsewhere plain
multi-row VALUES (SQLite >= 3.35 has ON CONFLICT and RETURNING).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from django.db import connection, transaction
from django.db.models import Sum
from django.db.models.functions import TruncMonth

from ..budgets.periods import month_start
from ..models import AgentSpendDay, AgentSpendMonth, UsageDaily, UsageEvent

CHUNK_ROWS = 500  # 10 parameters a row: well under every backend's parameter limit


@dataclass(frozen=True, slots=True)
class PricedEvent:
    request_id: str
    model: str
    provider: str
    input_tokens: int
    output_tokens: int
    cost_micros: int
    rate_source: str
    occurred_at: datetime

    @property
    def day(self) -> date:
        return self.occurred_at.date()  # occurred_at is in UTC


def _columns(model, names: Sequence[str]):
    fields = [model._meta.get_field(name) for name in names]
    quoted = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    if connection.vendor == "postgresql":
        return quoted, None  # psycopg adapts uuid, datetime and date itself
    return quoted, [lambda value, f=f: f.get_db_prep_value(value, connection) for f in fields]


def _values_sql(rows: list[tuple], adapters) -> tuple[str, list]:
    width = len(rows[0])
    placeholder = "(" + ", ".join(["%s"] * width) + ")"
    params: list = []
    for row in rows:
        params.extend(row if adapters is None else (adapt(v) for adapt, v in zip(adapters, row, strict=True)))
    return ", ".join([placeholder] * len(rows)), params


_EVENT_COLUMNS = ("agent", "request_id", "model", "provider", "input_tokens", "output_tokens", "cost_micros",
                  "rate_source", "occurred_at", "received_at")


def usage_events_insert(*, agent_id, events: list[PricedEvent], received_at: datetime) -> list[PricedEvent]:
    """Insert the events not stored yet; returns those this call inserted (call in a transaction)."""
    table = connection.ops.quote_name(UsageEvent._meta.db_table)
    columns, adapters = _columns(UsageEvent, _EVENT_COLUMNS)
    conflict = ", ".join(connection.ops.quote_name(c) for c in ("agent_id", "request_id"))
    ordered = sorted(events, key=lambda e: e.request_id)
    if connection.vendor == "postgresql":
        inserted_ids = _insert_unnest(table, columns, conflict, agent_id, ordered, received_at)
        return [e for e in events if e.request_id in inserted_ids]
    inserted_ids: set[str] = set()
    with connection.cursor() as cursor:
        for start in range(0, len(ordered), CHUNK_ROWS):
            chunk = ordered[start:start + CHUNK_ROWS]
            rows = [(agent_id, e.request_id, e.model, e.provider, e.input_tokens, e.output_tokens, e.cost_micros,
                     e.rate_source, e.occurred_at, received_at) for e in chunk]
            values, params = _values_sql(rows, adapters)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {values} "
                f"ON CONFLICT ({conflict}) DO NOTHING RETURNING {connection.ops.quote_name('request_id')}",
                params,
            )
            inserted_ids.update(row[0] for row in cursor.fetchall())
    return [e for e in events if e.request_id in inserted_ids]


_UNNEST_TYPES = ("text", "text", "text", "bigint", "bigint", "bigint", "text", "timestamptz")


def _insert_unnest(table: str, columns: str, conflict: str, agent_id, events: list[PricedEvent],
                   received_at: datetime) -> set[str]:
    """PostgreSQL: one column array per field instead of 10 placeholders a row, so a batch of
    1,000 events is one short statement (the driver's cost of splitting a query with 10,000
    placeholders was most of the request)."""
    arrays = [
        [e.request_id for e in events], [e.model for e in events], [e.provider for e in events],
        [e.input_tokens for e in events], [e.output_tokens for e in events], [e.cost_micros for e in events],
        [e.rate_source for e in events], [e.occurred_at for e in events],
    ]
    unnest = ", ".join(f"%s::{kind}[]" for kind in _UNNEST_TYPES)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} ({columns}) "
            f"SELECT %s, r, m, p, i, o, c, s, t, %s FROM unnest({unnest}) AS u(r, m, p, i, o, c, s, t) "
            f"ON CONFLICT ({conflict}) DO NOTHING RETURNING request_id",
            [agent_id, received_at, *arrays],
        )
        return {row[0] for row in cursor.fetchall()}


def _upsert_adding(model, key: Sequence[str], sums: Sequence[str], rows: list[tuple]) -> None:
    """INSERT rows; on a key clash add their `sums` columns to the stored row."""
    if not rows:
        return
    table = connection.ops.quote_name(model._meta.db_table)
    columns, adapters = _columns(model, (*key, *sums))
    conflict = ", ".join(connection.ops.quote_name(model._meta.get_field(k).column) for k in key)
    updates = ", ".join(
        f"{q} = {table}.{q} + excluded.{q}" for q in (connection.ops.quote_name(s) for s in sums)
    )
    with connection.cursor() as cursor:
        for start in range(0, len(rows), CHUNK_ROWS):
            values, params = _values_sql(rows[start:start + CHUNK_ROWS], adapters)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) VALUES {values} ON CONFLICT ({conflict}) DO UPDATE SET {updates}",
                params,
            )


def usage_rollups_add(*, agent_id, events: list[PricedEvent]) -> None:
    """Fold inserted events into UsageDaily and the spend rollups (call in the same transaction)."""
    daily: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    spend: dict[date, int] = defaultdict(int)
    for e in events:
        sums = daily[(e.day, e.model, e.provider, e.rate_source)]
        sums[0] += e.input_tokens
        sums[1] += e.output_tokens
        sums[2] += e.cost_micros
        sums[3] += 1
        spend[e.day] += e.cost_micros
    _upsert_adding(
        UsageDaily,
        ("agent", "day", "model", "provider", "rate_source"),
        ("input_tokens", "output_tokens", "cost_micros", "events"),
        [(agent_id, *key, *sums) for key, sums in sorted(daily.items())],
    )
    spend_rollups_add(agent_id=agent_id, spend=spend)


def spend_rollups_add(*, agent_id, spend: dict[date, int]) -> None:
    """Add micro-dollars per UTC day to the agent's AgentSpendDay and AgentSpendMonth rows (call
    in the transaction that inserted the events). Every day row is written before any month row,
    each table in key order, so concurrent batches still lock in one order."""
    month: dict[date, int] = defaultdict(int)
    for day, cost in spend.items():
        month[month_start(day)] += cost
    _upsert_adding(
        AgentSpendDay,
        ("agent", "day"),
        ("cost_micros",),
        [(agent_id, day, cost) for day, cost in sorted(spend.items())],
    )
    _upsert_adding(
        AgentSpendMonth,
        ("agent", "month"),
        ("cost_micros",),
        [(agent_id, first, cost) for first, cost in sorted(month.items())],
    )


@transaction.atomic
def spend_months_rebuild() -> int:
    """Set every AgentSpendMonth row to the sum of its day rows; returns how many there are. For
    the release that adds the month rollup: processes of the previous release that ingest after
    its migration add to the days only, so run this once they have stopped. Ingestion waits
    meanwhile (a SHARE lock on the day rows, which every ingest writes before its months)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {connection.ops.quote_name(AgentSpendDay._meta.db_table)} IN SHARE MODE")
    AgentSpendMonth.objects.all().delete()  # first: SQLite's write lock is taken here, before the read
    sums = (AgentSpendDay.objects.annotate(first=TruncMonth("day")).order_by()
            .values_list("agent_id", "first").annotate(cost=Sum("cost_micros")))
    rows = [AgentSpendMonth(agent_id=agent_id, month=first, cost_micros=cost) for agent_id, first, cost in sums]
    AgentSpendMonth.objects.bulk_create(rows, batch_size=CHUNK_ROWS)
    return len(rows)
