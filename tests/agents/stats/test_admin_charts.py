"""The Agent admin page's CPU and memory charts of the last hour: server-rendered SVG."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from agents.stats.admin import agent_stats_charts
from agents.stats.chart import HEIGHT, WIDTH, Series, svg_chart
from tests.factories.agents import AgentFactory, make_samples

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
END = START + timedelta(hours=1)


def polyline_points(svg: str) -> list[tuple[float, float]]:
    match = re.search(r'<polyline[^>]* points="([^"]*)"', svg)
    assert match, svg
    return [tuple(map(float, pair.split(","))) for pair in match.group(1).split()]


def test_a_series_is_drawn_as_one_polyline_point_per_sample_inside_the_chart():
    points = [(START + timedelta(minutes=m), float(m)) for m in range(0, 61, 10)]

    svg = svg_chart(Series("CPU", "%", points), start=START, end=END)

    drawn = polyline_points(svg)
    assert len(drawn) == 7
    assert all(0 <= x <= WIDTH and 0 <= y <= HEIGHT for x, y in drawn)
    xs, ys = [x for x, _ in drawn], [y for _, y in drawn]
    assert xs == sorted(xs)  # time runs left to right
    assert ys == sorted(ys, reverse=True)  # larger values are drawn higher
    assert "60.0 %" in svg  # the latest value


def test_a_ceiling_is_drawn_as_a_dashed_line_and_kept_in_view():
    svg = svg_chart(Series("Memory", "MB", [(START, 10.0)], ceiling=512.0), start=START, end=END)

    assert 'stroke-dasharray="4 3"' in svg
    assert "538 MB" in svg  # the scale tops the ceiling by 5 % (537.6)


def test_an_empty_series_says_so_and_draws_no_line():
    svg = svg_chart(Series("CPU", "%", []), start=START, end=END)

    assert "no samples" in svg
    assert "<polyline" not in svg


def test_titles_are_escaped():
    svg = svg_chart(Series("<script>", "%", []), start=START, end=END)

    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg


@pytest.mark.django_db
def test_an_agents_charts_show_its_last_hour_of_cpu_and_memory_against_its_limit():
    agent = AgentFactory()
    make_samples(agent, start=timezone.now() - timedelta(minutes=30), count=12, memory_limit_mb=256.0)
    make_samples(agent, start=timezone.now() - timedelta(hours=2), count=1)  # older than the hour
    make_samples(AgentFactory(), start=timezone.now() - timedelta(minutes=5), count=3)

    cpu, memory, network, disk = agent_stats_charts(agent.pk)

    assert len(polyline_points(cpu)) == 12
    assert len(polyline_points(memory)) == 12
    assert "CPU" in cpu and "Memory" in memory
    assert 'stroke-dasharray="4 3"' in memory
    assert len(polyline_points(network)) == 11  # rates: one between each two samples
    assert "Network" in network and "received" in network and "sent" in network and "Disk" in disk and "written" in disk


@pytest.mark.django_db
def test_the_agent_admin_page_shows_its_four_charts_over_the_range_picked(client):
    from tests.factories.accounts import AdminFactory

    agent = AgentFactory()
    make_samples(agent, start=timezone.now() - timedelta(minutes=10), count=6)
    client.force_login(AdminFactory())

    response = client.get(f"/admin/agents/agent/{agent.pk}/change/")

    assert response.status_code == 200
    page = response.content.decode()
    assert "Resource usage, last hour" in page
    assert page.count('class="agent-stats-chart"') == 4
    assert not re.search(r'(?:src|href)="(?:https?:)?//', page)  # no script, style or font from elsewhere
    assert "?range=15m" in page and "?range=24h" in page  # the time range picker

    day = client.get(f"/admin/agents/agent/{agent.pk}/change/?range=24h").content.decode()
    assert "Resource usage, last 24 hours" in day
