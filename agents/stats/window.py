"""The time window of a history request: `range`, or `from` and `to` together."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from fleet.errors import ValidationFailed

RANGES: dict[str, timedelta] = {
    "5m": timedelta(minutes=5),
    "15m": timedelta(minutes=15),
    "30m": timedelta(minutes=30),
    "1h": timedelta(hours=1),
    "6h": timedelta(hours=6),
    "24h": timedelta(hours=24),
}
DEFAULT_RANGE = "15m"
INVALID_TIMESTAMP = "Give an ISO 8601 timestamp, e.g. 2026-01-31T12:00:00Z."


@dataclass(frozen=True)
class Window:
    """Both ends are inclusive: a sample taken exactly at `end` belongs to the window."""

    start: datetime
    end: datetime

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


def window_from_query(params, *, now: datetime | None = None) -> Window:
    """The window a query string asks for, or a 400 that names the offending field.

    `from` and `to` win over `range` (the spec: range is ignored when both are given);
    one of them alone is an error, and so is `from` after `to`.
    """
    raw_from, raw_to = params.get("from"), params.get("to")
    if raw_from is not None or raw_to is not None:
        missing = "to" if raw_to is None else "from" if raw_from is None else None
        if missing:
            other = "from" if missing == "to" else "to"
            raise ValidationFailed({missing: f"Give '{missing}' together with '{other}'."})
        start, end = _timestamp(raw_from), _timestamp(raw_to)
        bad = {field: INVALID_TIMESTAMP for field, value in (("from", start), ("to", end)) if value is None}
        if bad:
            raise ValidationFailed(bad)
        if start > end:
            raise ValidationFailed({"from": "'from' must not be after 'to'."})
        return Window(start, end)

    name = params.get("range", DEFAULT_RANGE)
    if name not in RANGES:
        raise ValidationFailed({"range": f"Use one of {', '.join(RANGES)}."})
    end = now or timezone.now()
    return Window(end - RANGES[name], end)


def _timestamp(value: str) -> datetime | None:
    """An aware datetime from ISO 8601 (a naive one is taken as UTC), or None."""
    parsed = _parse(value)
    if parsed is None and " " in value.strip():
        # An unencoded '+' of a UTC offset arrives as a space in a query string.
        parsed = _parse(value.strip().replace(" ", "+"))
    if parsed is None:
        return None
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


def _parse(value: str) -> datetime | None:
    try:
        return parse_datetime(value.strip())
    except ValueError:  # well formed but impossible, e.g. month 13
        return None
