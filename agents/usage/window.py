"""The period of GET /workspaces/cost: whole UTC days, inclusive at both ends.

`period_start` and `period_end` (YYYY-MM-DD, both or neither, start not after end, at most
366 days) win over `period_days`; `period_days` (1 to 365, default 30) means the last N UTC
days ending today, today included. Anything else is a 400 naming the field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from fleet.errors import ValidationFailed

DEFAULT_DAYS = 30
MAX_DAYS = 365
MAX_CUSTOM_DAYS = 366
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAYS = re.compile(r"^\d{1,4}$")


@dataclass(frozen=True)
class CostWindow:
    start: date
    end: date  # inclusive

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def _date(params, name: str, errors: dict) -> date | None:
    raw = params.get(name)
    if raw is None or raw == "":
        errors[name] = ["Required together with the other custom date (YYYY-MM-DD)."]
        return None
    try:
        if not _DATE.match(raw):
            raise ValueError
        return date.fromisoformat(raw)
    except ValueError:
        errors[name] = ["A date in the form YYYY-MM-DD is required."]
        return None


def cost_window_from_query(params, *, today: date) -> CostWindow:
    if "period_start" in params or "period_end" in params:
        errors: dict[str, list[str]] = {}
        start, end = _date(params, "period_start", errors), _date(params, "period_end", errors)
        if errors:
            raise ValidationFailed(errors)
        if start > end:
            raise ValidationFailed({"period_start": ["Must not be after period_end."]})
        window = CostWindow(start, end)
        if window.days > MAX_CUSTOM_DAYS:
            raise ValidationFailed({"period_end": [f"A custom period covers at most {MAX_CUSTOM_DAYS} days."]})
        return window
    raw = params.get("period_days", str(DEFAULT_DAYS))
    if not _DAYS.match(raw.strip()) or not 1 <= int(raw) <= MAX_DAYS:
        raise ValidationFailed({"period_days": [f"A whole number of days from 1 to {MAX_DAYS} is required."]})
    days = int(raw)
    return CostWindow(today - timedelta(days=days - 1), today)
