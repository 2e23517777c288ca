"""Budget periods are UTC calendar periods: the day, the ISO week (from Monday), the month."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from ..models import BudgetPeriod


@dataclass(frozen=True)
class PeriodWindow:
    start: date  # first day in the period
    end: date  # first day after it

    @property
    def resets_at(self) -> datetime:
        return datetime.combine(self.end, time.min, tzinfo=UTC)


def month_start(day: date) -> date:
    """The first day of `day`'s month: the monthly window's start, and AgentSpendMonth's key."""
    return day.replace(day=1)


def period_window(period: str, now: datetime) -> PeriodWindow:
    today = now.astimezone(UTC).date()
    if period == BudgetPeriod.DAILY:
        return PeriodWindow(today, today + timedelta(days=1))
    if period == BudgetPeriod.WEEKLY:
        monday = today - timedelta(days=today.weekday())
        return PeriodWindow(monday, monday + timedelta(days=7))
    if period == BudgetPeriod.MONTHLY:
        first = month_start(today)
        following = (first + timedelta(days=32)).replace(day=1)
        return PeriodWindow(first, following)
    raise ValueError(f"Unknown budget period {period!r}")


def period_windows(now: datetime) -> dict[str, PeriodWindow]:
    return {period: period_window(period, now) for period in BudgetPeriod.values}
