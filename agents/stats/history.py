"""Stats history reads: raw samples for short windows, evenly spaced buckets for long ones.

At most MAX_RECORDS records, oldest first. When the window holds more samples than that,
it is cut into MAX_RECORDS equal buckets and each non-empty bucket becomes one record,
computed in SQL: the average for gauges (CPU, memory, pids), the maximum for cumulative
counters (network and disk totals, which only grow, so the maximum is the bucket's last
value). A bucket's `recorded_at` is its start. Both reads walk the primary key
(agent_id, recorded_at).
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Avg, DateTimeField, DurationField, F, Func, IntegerField, Max, Value
from django.db.models.expressions import ExpressionWrapper

from agents.models import StatsSample
from agents.models.stats import COUNTER_FIELDS, GAUGE_FIELDS, RECORD_FIELDS

from .window import Window

MAX_RECORDS = 2000
GAUGE_DECIMALS = 2  # averages of 4-byte floats carry no more than this honestly


class BucketIndex(Func):
    """floor(seconds since the window start / bucket width), clamped to the last bucket
    because the window's end is inclusive and would otherwise open one bucket too many."""

    output_field = IntegerField()

    def __init__(self, since_start, *, width_seconds: float, last: int):
        super().__init__(since_start, width=float(width_seconds), last=int(last))

    def as_postgresql(self, compiler, connection, **extra):
        template = "LEAST(FLOOR(EXTRACT(EPOCH FROM %(expressions)s) / %(width)r), %(last)d)::integer"
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
    aggregates = {f"avg_{name}": Avg(name) for name in GAUGE_FIELDS}
    aggregates |= {f"max_{name}": Max(name) for name in COUNTER_FIELDS}
    rows = (
        samples.annotate(bucket=BucketIndex(since_start, width_seconds=width, last=buckets - 1))
        .values("bucket")
        .annotate(**aggregates)
        .order_by("bucket")
    )
    return [_record(row, window=window, width=width) for row in rows]


def _record(row: dict, *, window: Window, width: float) -> dict:
    record = {"recorded_at": window.start + timedelta(seconds=row["bucket"] * width)}
    for name in RECORD_FIELDS:
        if name in COUNTER_FIELDS:
            record[name] = row[f"max_{name}"]
        else:
            record[name] = round(float(row[f"avg_{name}"]), GAUGE_DECIMALS)
    return record
