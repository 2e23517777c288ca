"""The logs route's query: `tail` (lines, default 200, at most 5,000) and `since` (a time)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from fleet.errors import ValidationFailed

from ..stats.window import INVALID_TIMESTAMP, _timestamp

DEFAULT_TAIL = 200
MAX_TAIL = 5000


@dataclass(frozen=True)
class LogsQuery:
    tail: int
    since: datetime | None


def logs_query_from(params, *, last_event_id: str | None = None) -> LogsQuery:
    """The query, or a 400 naming the field. An EventSource reconnecting sends the id of the
    last event it got (the ts of its last line): it wins over `since`, so nothing is repeated."""
    errors: dict[str, str] = {}
    tail = DEFAULT_TAIL
    raw_tail = params.get("tail")
    if raw_tail is not None:
        try:
            tail = int(raw_tail)
        except ValueError:
            tail = -1
        if not 0 <= tail <= MAX_TAIL:
            errors["tail"] = f"Give a whole number of lines from 0 to {MAX_TAIL}."
    since = None
    raw_since = last_event_id or params.get("since")
    if raw_since is not None:
        since = _instant(raw_since)
        if since is None:
            errors["since"] = INVALID_TIMESTAMP + " Unix seconds are accepted too."
        elif last_event_id:
            since += timedelta(microseconds=1)  # after the line the client already has
    if errors:
        raise ValidationFailed(errors)
    return LogsQuery(tail=tail, since=since)


def _instant(value: str) -> datetime | None:
    """ISO 8601, or Unix seconds (what `docker logs --since` takes)."""
    try:
        seconds = float(value)
    except ValueError:
        return _timestamp(value)
    if not 0 <= seconds < 253402300800:  # year 10000
        return None
    return datetime.fromtimestamp(seconds, tz=UTC)
