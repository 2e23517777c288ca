"""Backup schedules: 5-field cron expressions (minute hour day month weekday), read in UTC."""

from __future__ import annotations

from datetime import datetime

from croniter import CroniterBadCronError, croniter


def schedule_error(expression: str) -> str | None:
    """Why `expression` is not a usable schedule, or None when it is."""
    if not isinstance(expression, str) or len(expression.split()) != 5:
        return "A cron schedule of 5 fields: minute hour day-of-month month day-of-week (UTC), e.g. '0 3 * * *'."
    try:
        croniter(expression)
    except (CroniterBadCronError, ValueError, KeyError) as exc:
        return f"Not a valid cron schedule: {exc}."
    return None


def next_run_after(expression: str, moment: datetime) -> datetime:
    """The first time strictly after `moment` that the schedule names (aware, UTC)."""
    return croniter(expression, moment).get_next(datetime)
