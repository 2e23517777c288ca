"""Stats history reads: raw samples for short windows, evenly spaced buckets for long ones.

At most MAX_RECORDS records, oldest first. When the window holds more samples than that,
it is cut into MAX_RECORDS equal buckets and each non-empty bucket becomes one record,
computed in SQL: the average for gauges (CPU, memory, pids), the maximum for cumulative
counters (network and disk totals, which only grow, so the maximum is the bucket's last
value). A bucket's `recorded_at` is its start; averages are not rounded. Both reads are
index-only scans of the primary key (agent_id, recorded_at), which covers the values.
"""

from __future__ import annotations

from datetime import timedelta
from operator import itemgetter

from django.db import connection
from django.db.models import (
    Avg,
    DateTimeField,
    DurationField,
    F,
    FloatField,
    Func,
    IntegerField,
    Max,
    Value,
)
from django.db.models.expressions import ExpressionWrapper
from django.db.models.functions import Cast

from agents.models import StatsSample
from agents.models.stats import COUNTER_FIELDS, RECORD_FIELDS

from .window import Window

MAX_RECORDS = 2000


class BucketIndex(Func):
    """floor(seconds since the window start / bucket width), clamped to the last bucket
    because the window's end is inclusive and would otherwise open one bucket too many."""

    output_field = IntegerField()

    def __init__(self, since_start, *, width_seconds: float, last: int):
        super().__init__(since_start, width=float(width_seconds), last=int(last))

    def as_postgresql(self, compiler, connection, **extra):
        # date_part gives double precision; EXTRACT gives numeric, several times slower per row.
        template = "LEAST(FLOOR(DATE_PART('epoch', %(expressions)s) / %(width)r), %(last)d)::integer"
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # Django's SQLite date subtraction yields microseconds.
        template = "MIN(CAST(%(expressions)s / 1000000.0 / %(width)r AS INTEGER), %(last)d)"
        return self.as_sql(compiler, connection, template=template, **extra)


def history_records(*, agent_id, window: Window, max_records: int = MAX_RECORDS) -> list[dict]:
    """The spec's stats history records of one agent in `window`, oldest first."""
    samples = StatsSample.objects.filter(
        agent_id=agent_id, recorded_at__gte=window.start, recorded_at__lte=window.end
    )
    if samples.count() <= max_records:
        return list(samples.order_by("recorded_at").values("recorded_at", *RECORD_FIELDS))
    return _bucketed(samples, window=window, buckets=max_records)


def _bucketed(samples, *, window: Window, buckets: int) -> list[dict]:
    width = window.seconds / buckets
    since_start = ExpressionWrapper(
        F("recorded_at") - Value(window.start, output_field=DateTimeField()), output_field=DurationField()
    )
    aggregates = {f"agg_{name}": Max(name) if name in COUNTER_FIELDS else _average(name) for name in RECORD_FIELDS}
    query = (
        samples.annotate(bucket=BucketIndex(since_start, width_seconds=width, last=buckets - 1))
        .values("bucket")
        .annotate(**aggregates)
        .order_by("bucket")
    )
    # The ORM writes the SQL; the driver's tuples are read as they are, because Django's
    # per-value converters would cost more than the query itself at 2000 rows.
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = [column[0] for column in cursor.description]
        rows = cursor.fetchall()
    values_of = itemgetter(*(columns.index(f"agg_{name}") for name in RECORD_FIELDS))
    bucket_of = itemgetter(columns.index("bucket"))
    start, step, keys = window.start, timedelta(seconds=width), ("recorded_at", *RECORD_FIELDS)
    return [dict(zip(keys, (start + bucket_of(row) * step, *values_of(row)), strict=True)) for row in rows]


def _average(name: str):
    """avg(name) as a float in SQL: PostgreSQL averages integers (pids) as numeric."""
    return Cast(Avg(name), FloatField())
