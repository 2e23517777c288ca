"""The stats part of the Agent admin page: CPU, memory, network and disk over a chosen range
(15 minutes to 24 hours) as SVG charts.

AgentAdmin mixes in `AgentStatsChartsMixin`; the charts are drawn by
templates/admin/agents/agent/change_form.html, which the admin picks up by its name. Network
and disk are cumulative counters in the samples: they are charted as rates (MB/s between two
samples; a restart, where a counter starts again from zero, counts as no traffic).
"""

from __future__ import annotations

import uuid

from django.utils import timezone

from .chart import Series, svg_chart
from .history import history_records
from .window import RANGES, Window

CHART_RANGES = ("15m", "30m", "1h", "6h", "24h")
DEFAULT_CHART_RANGE = "1h"
RANGE_WORDS = {"15m": "last 15 minutes", "30m": "last 30 minutes", "1h": "last hour", "6h": "last 6 hours",
               "24h": "last 24 hours"}


def chart_range(value: str | None) -> str:
    return value if value in CHART_RANGES else DEFAULT_CHART_RANGE


def _rates(records: list[dict], field: str) -> list[tuple]:
    """MB/s between consecutive samples of a cumulative counter, at the later sample's time."""
    rates = []
    for before, after in zip(records, records[1:], strict=False):
        seconds = (after["recorded_at"] - before["recorded_at"]).total_seconds()
        if seconds > 0:
            rates.append((after["recorded_at"], max(after[field] - before[field], 0.0) / seconds))
    return rates


def agent_stats_charts(agent_id, range_name: str = DEFAULT_CHART_RANGE) -> list:
    """The CPU, memory, network and disk charts of an agent's samples over `range_name`."""
    end = timezone.now()
    window = Window(end - RANGES[chart_range(range_name)], end)
    records = history_records(agent_id=agent_id, window=window)
    limit = max((r["memory_limit_mb"] for r in records), default=None)
    cpu = Series("CPU", "%", [(r["recorded_at"], r["cpu_percent"]) for r in records])
    memory = Series("Memory", "MB", [(r["recorded_at"], r["memory_usage_mb"]) for r in records], ceiling=limit)
    received = Series("received", "MB/s", _rates(records, "network_rx_mb"))
    sent = Series("sent", "MB/s", _rates(records, "network_tx_mb"))
    read = Series("read", "MB/s", _rates(records, "disk_read_mb"))
    written = Series("written", "MB/s", _rates(records, "disk_write_mb"))
    at = {"start": window.start, "end": end}
    return [svg_chart(cpu, **at), svg_chart(memory, **at), svg_chart(received, extra=(sent,), title="Network", **at),
            svg_chart(read, extra=(written,), title="Disk", **at)]


def _uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


class AgentStatsChartsMixin:
    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        agent_id = _uuid(object_id)
        if agent_id is not None:  # otherwise the admin answers its own "not found"
            chosen = chart_range(request.GET.get("range"))
            extra_context["stats_charts"] = agent_stats_charts(agent_id, chosen)
            extra_context["stats_range"] = chosen
            extra_context["stats_range_words"] = RANGE_WORDS[chosen]
            extra_context["stats_ranges"] = CHART_RANGES
        return super().change_view(request, object_id, form_url, extra_context)
