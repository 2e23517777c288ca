"""The stats part of the Agent admin page: CPU and memory of the last hour as SVG charts.

AgentAdmin mixes in `AgentStatsChartsMixin`; the charts are drawn by
templates/admin/agents/agent/change_form.html, which the admin picks up by its name.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.utils import timezone

from .chart import Series, svg_chart
from .history import history_records
from .window import Window

CHART_WINDOW = timedelta(hours=1)


def agent_stats_charts(agent_id) -> list:
    """The CPU and memory charts of an agent's last hour of samples."""
    end = timezone.now()
    window = Window(end - CHART_WINDOW, end)
    records = history_records(agent_id=agent_id, window=window)
    limit = max((r["memory_limit_mb"] for r in records), default=None)
    cpu = Series("CPU", "%", [(r["recorded_at"], r["cpu_percent"]) for r in records])
    memory = Series("Memory", "MB", [(r["recorded_at"], r["memory_usage_mb"]) for r in records], ceiling=limit)
    return [svg_chart(cpu, start=window.start, end=end), svg_chart(memory, start=window.start, end=end)]


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
            extra_context["stats_charts"] = agent_stats_charts(agent_id)
        return super().change_view(request, object_id, form_url, extra_context)
