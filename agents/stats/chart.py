"""Server-rendered SVG line charts for the admin (no chart script, nothing from a CDN), with
readable axes: a scale on the left (five ticks with their unit), times along the bottom (five
ticks, UTC), light grid lines, the latest value in the title, and a legend when a chart
carries more than one series (network received and sent)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 640, 180
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 64, 12, 24, 22
Y_TICKS, X_TICKS = 4, 4  # intervals: five labels each
COLORS = ("#2a6ebb", "#d97706")


@dataclass(frozen=True)
class Series:
    title: str
    unit: str
    points: list[tuple[datetime, float]]  # oldest first
    ceiling: float | None = None  # drawn as a dashed line (a limit), and kept in view


def _number(value: float) -> str:
    if value >= 100 or value == 0:
        return f"{value:.0f}"
    return f"{value:.1f}" if value >= 1 else f"{value:.2f}"


def _time_label(at: datetime, span_seconds: float) -> str:
    return f"{at:%H:%M:%S}" if span_seconds < 30 * 60 else f"{at:%H:%M}"


def svg_chart(series: Series, *, start: datetime, end: datetime, extra: tuple[Series, ...] = (),
              title: str | None = None) -> SafeString:
    """`series` (and `extra` series of the same unit, then `title` names the chart and each
    series' title is its legend) over [start, end] as an inline SVG."""
    every = (series, *extra)
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    span = max((end - start).total_seconds(), 1.0)
    top = max([v for s in every for _, v in s.points] + [series.ceiling or 0.0, 1.0]) * 1.05

    def x(at: datetime) -> float:
        return PAD_LEFT + (at - start).total_seconds() / span * plot_w

    def y(value: float) -> float:
        return PAD_TOP + plot_h - value / top * plot_h

    latest = "; ".join(
        (f"{s.points[-1][1]:.1f} {s.unit}" if s.points else "no samples") + (f" {s.title}" if extra else "")
        for s in every
    )
    title = title or series.title
    parts = [
        format_html(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
            'aria-label="{}" class="agent-stats-chart" style="font: 11px sans-serif" fill="currentColor">',
            WIDTH, HEIGHT, WIDTH, HEIGHT, f"{title}: {latest}",
        ),
        format_html(
            '<text x="{}" y="14" font-weight="bold">{} ({})</text>', PAD_LEFT, title, latest,
        ),
        format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#999" stroke-opacity=".6"/>',
            PAD_LEFT, PAD_TOP, plot_w, plot_h,
        ),
    ]
    for tick in range(Y_TICKS + 1):
        value = top * tick / Y_TICKS
        at = y(value)
        label = f"{top:.0f} {series.unit}" if tick == Y_TICKS else f"{_number(value)}"
        parts.append(format_html('<text x="{}" y="{}" text-anchor="end">{}</text>', PAD_LEFT - 6, f"{at + 4:.1f}",
                                 label))
        if 0 < tick < Y_TICKS:
            parts.append(format_html('<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#999" stroke-opacity=".25"/>',
                                     PAD_LEFT, PAD_LEFT + plot_w, f"{at:.1f}", f"{at:.1f}"))
    for tick in range(X_TICKS + 1):
        at = start + (end - start) * tick / X_TICKS
        anchor = "start" if tick == 0 else "end" if tick == X_TICKS else "middle"
        label = _time_label(at, span) + (" UTC" if tick == 0 else "")
        parts.append(format_html('<text x="{}" y="{}" text-anchor="{}">{}</text>', f"{x(at):.1f}", HEIGHT - 6,
                                 anchor, label))
    if series.ceiling:
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#c00" stroke-dasharray="4 3"/>',
                PAD_LEFT, PAD_LEFT + plot_w, f"{y(series.ceiling):.1f}", f"{y(series.ceiling):.1f}",
            )
        )
    for index, drawn in enumerate(every):
        color = COLORS[index % len(COLORS)]
        if drawn.points:
            coordinates = " ".join(f"{x(at):.1f},{y(value):.1f}" for at, value in drawn.points)
            parts.append(format_html('<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>', color,
                                     coordinates))
        if extra:  # a legend entry per series, at the top right
            legend_x = WIDTH - PAD_RIGHT - 110 * (len(every) - index)
            parts.append(format_html('<rect x="{}" y="6" width="10" height="10" fill="{}"/>', legend_x, color))
            parts.append(format_html('<text x="{}" y="15">{}</text>', legend_x + 14, drawn.title))
    parts.append(mark_safe("</svg>"))
    return mark_safe("".join(parts))
