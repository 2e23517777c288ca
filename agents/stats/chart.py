"""Server-rendered SVG line charts for the admin (no chart script, nothing from a CDN)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

WIDTH, HEIGHT = 640, 160
PAD_LEFT, PAD_RIGHT, PAD_TOP, PAD_BOTTOM = 56, 12, 12, 22


@dataclass(frozen=True)
class Series:
    title: str
    unit: str
    points: list[tuple[datetime, float]]  # oldest first
    ceiling: float | None = None  # drawn as a dashed line (a limit), and kept in view


def svg_chart(series: Series, *, start: datetime, end: datetime) -> SafeString:
    """One series over [start, end] as an inline SVG, with its scale, latest value and ceiling."""
    plot_w, plot_h = WIDTH - PAD_LEFT - PAD_RIGHT, HEIGHT - PAD_TOP - PAD_BOTTOM
    span = max((end - start).total_seconds(), 1.0)
    top = max([v for _, v in series.points] + [series.ceiling or 0.0, 1.0]) * 1.05

    def x(at: datetime) -> float:
        return PAD_LEFT + (at - start).total_seconds() / span * plot_w

    def y(value: float) -> float:
        return PAD_TOP + plot_h - value / top * plot_h

    latest = f"{series.points[-1][1]:.1f} {series.unit}" if series.points else "no samples"
    parts = [
        format_html(
            '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" width="{}" height="{}" role="img" '
            'aria-label="{}" class="agent-stats-chart" style="font: 11px sans-serif">',
            WIDTH, HEIGHT, WIDTH, HEIGHT, f"{series.title}: {latest}",
        ),
        format_html(
            '<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#ccc"/>', PAD_LEFT, PAD_TOP, plot_w, plot_h
        ),
        format_html('<text x="4" y="{}">{}</text>', PAD_TOP + 10, f"{top:.0f} {series.unit}"),
        format_html('<text x="4" y="{}">0</text>', PAD_TOP + plot_h),
        format_html('<text x="{}" y="{}">{}</text>', PAD_LEFT, HEIGHT - 6, f"{start:%H:%M} UTC"),
        format_html('<text x="{}" y="{}" text-anchor="end">{}</text>', WIDTH - PAD_RIGHT, HEIGHT - 6, f"{end:%H:%M}"),
        format_html(
            '<text x="{}" y="{}" text-anchor="middle" font-weight="bold">{} ({})</text>',
            PAD_LEFT + plot_w / 2, HEIGHT - 6, series.title, latest,
        ),
    ]
    if series.ceiling:
        parts.append(
            format_html(
                '<line x1="{}" x2="{}" y1="{}" y2="{}" stroke="#c00" stroke-dasharray="4 3"/>',
                PAD_LEFT, PAD_LEFT + plot_w, f"{y(series.ceiling):.1f}", f"{y(series.ceiling):.1f}",
            )
        )
    if series.points:
        coordinates = " ".join(f"{x(at):.1f},{y(value):.1f}" for at, value in series.points)
        parts.append(
            format_html('<polyline fill="none" stroke="#2a6ebb" stroke-width="1.5" points="{}"/>', coordinates)
        )
    parts.append(mark_safe("</svg>"))
    return mark_safe("".join(parts))
