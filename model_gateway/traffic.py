"""Counting the gateway's calls by hour and outcome, and reading them back with the usage the
gateway recorded (tokens, spend) for the agent page and GET /agents/:id/model-gateway/traffic."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, F, Sum
from django.db.models.functions import TruncHour
from django.utils import timezone

from agents.models import RateSource, UsageEvent
from agents.models.money import micros_to_usd

from .models import TrafficHour

FORWARDED = "forwarded"
MAX_HOURS = 24 * 31


def traffic_count(*, agent_id, outcome: str, at: datetime | None = None, count: int = 1) -> None:
    """`count` more calls of `agent_id` that ended with `outcome` in the current hour."""
    hour = (at or timezone.now()).replace(minute=0, second=0, microsecond=0)
    table = connection.ops.quote_name(TrafficHour._meta.db_table)
    # One statement, whoever counts at the same time (INSERT ... ON CONFLICT: PostgreSQL and SQLite).
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (agent_id, hour, outcome, count) VALUES (%s, %s, %s, %s) "
            f"ON CONFLICT (agent_id, hour, outcome) DO UPDATE SET count = {table}.count + EXCLUDED.count",
            [TrafficHour._meta.get_field("agent").get_db_prep_value(agent_id, connection),
             TrafficHour._meta.get_field("hour").get_db_prep_value(hour, connection), outcome, count],
        )


def agent_traffic(*, agent_id, hours: int = 24, now: datetime | None = None) -> dict:
    """The last `hours` hours, oldest first: calls forwarded, tokens and spend the providers
    reported, and refusals by code; with the totals."""
    now = now or timezone.now()
    first = now.replace(minute=0, second=0, microsecond=0) - timedelta(hours=hours - 1)
    buckets: dict = defaultdict(lambda: {"calls": 0, "inputTokens": 0, "outputTokens": 0, "costMicros": 0,
                                         "refusals": {}})
    for row in TrafficHour.objects.filter(agent_id=agent_id, hour__gte=first).values("hour", "outcome", "count"):
        bucket = buckets[row["hour"]]
        if row["outcome"] == FORWARDED:
            bucket["calls"] += row["count"]
        else:
            bucket["refusals"][row["outcome"]] = row["count"]
    usage = (UsageEvent.objects.filter(agent_id=agent_id, rate_source=RateSource.GATEWAY, occurred_at__gte=first)
             .annotate(at=TruncHour("occurred_at")).values("at")
             .annotate(events=Count("pk"), input=Sum("input_tokens"), output=Sum(F("output_tokens")),
                       cost=Sum("cost_micros")))
    for row in usage:
        bucket = buckets[row["at"]]
        bucket["inputTokens"] += row["input"] or 0
        bucket["outputTokens"] += row["output"] or 0
        bucket["costMicros"] += row["cost"] or 0
    series = []
    totals = {"calls": 0, "inputTokens": 0, "outputTokens": 0, "costMicros": 0, "refusals": defaultdict(int)}
    for index in range(hours):
        hour = first + timedelta(hours=index)
        bucket = buckets.get(hour)
        if bucket is None:
            continue
        series.append({"hour": hour, "calls": bucket["calls"], "inputTokens": bucket["inputTokens"],
                       "outputTokens": bucket["outputTokens"], "costUsd": micros_to_usd(bucket["costMicros"]),
                       "refusals": bucket["refusals"]})
        for name in ("calls", "inputTokens", "outputTokens", "costMicros"):
            totals[name] += bucket[name]
        for code, count in bucket["refusals"].items():
            totals["refusals"][code] += count
    return {"since": first, "hours": hours, "series": series,
            "totals": {"calls": totals["calls"], "inputTokens": totals["inputTokens"],
                       "outputTokens": totals["outputTokens"], "costUsd": micros_to_usd(totals["costMicros"]),
                       "refusals": dict(totals["refusals"])}}
