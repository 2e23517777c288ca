"""Fan-out's two statements, for a whole burst of events: claim the events waiting for fan-out,
then INSERT ... SELECT the deliveries of every channel they match.

The claim is one conditional UPDATE ... RETURNING of `fleet_event.fanned_out_at` over the waiting
events (a partial index holds only those): on PostgreSQL its subquery locks them FOR UPDATE SKIP
LOCKED, so two dispatches at once take different events; SQLite runs one writer at a time
(transactions BEGIN IMMEDIATE) and needs no lock clause. Only the caller whose UPDATE changed an
event matches it, and it does so in the same transaction, so a failure or a crash in between
rolls the claim back with it: the events wait for the next dispatch.

The match is one statement for the burst. Python hands it three small tables, as arrays
(PostgreSQL, unnest) or one JSON array (SQLite, json_each): the (event, workspace, kind) of every
claimed event, the (kind, pattern) pairs of the kinds in the burst (`patterns.matching_patterns`,
so a rule is found by equality on workspace, enabled and pattern, the `alerts_rule_match`
index), and the (event, workspace, rule) of rule tests, which go to their one rule whatever its
pattern and even while it is disabled. ON CONFLICT DO NOTHING on (event, channel) keeps a
delivery from ever being made twice, whatever happens around it.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from django.core.exceptions import ValidationError
from django.db import connection

from fleet.models import Event

from ..models import AlertChannel, AlertRule, Delivery, DeliveryStatus
from ..patterns import matching_patterns

logger = logging.getLogger(__name__)

TEST_RULE_KEY = "ruleId"  # a test event names the one rule it is for


@dataclass(frozen=True)
class ClaimedEvent:
    id: uuid.UUID
    kind: str
    workspace_ids: list
    test_rule_id: object  # the ruleId of a rule test, as stored; None for every other event


class NewDelivery(NamedTuple):
    id: uuid.UUID
    channel_id: uuid.UUID
    channel_type: str


_CLAIM = """
UPDATE {event} SET fanned_out_at = %s
WHERE fanned_out_at IS NULL AND id IN (
    SELECT id FROM {event} WHERE fanned_out_at IS NULL{filters}
    ORDER BY occurred_at LIMIT %s{lock}
)
RETURNING id, kind, workspace_ids, CASE WHEN test THEN data END
"""
_LOCK = {"postgresql": " FOR UPDATE SKIP LOCKED", "sqlite": ""}

_INSERT = """
WITH m (event_id, workspace_id, kind) AS ({events}),
     p (kind, pattern) AS ({patterns}),
     t (event_id, workspace_id, rule_id) AS ({tests})
INSERT INTO {delivery} (id, rule_id, channel_id, event_id, channel_type, status, attempts,
                        next_attempt_at, queued_at, created_at)
SELECT {new_id}, found.rule_id, found.channel_id, found.event_id, found.type, %s, 0, %s, %s, %s
FROM (
    SELECT c.rule_id, c.id AS channel_id, m.event_id, c.type
    FROM m
    JOIN p ON p.kind = m.kind
    JOIN {rule} r ON r.workspace_id = m.workspace_id AND r.enabled = %s AND r.event_pattern = p.pattern
    JOIN {channel} c ON c.rule_id = r.id
    UNION ALL
    SELECT c.rule_id, c.id, t.event_id, c.type
    FROM t
    JOIN {rule} r ON r.id = t.rule_id AND r.workspace_id = t.workspace_id
    JOIN {channel} c ON c.rule_id = r.id
) AS found
WHERE true
ON CONFLICT DO NOTHING
RETURNING id, channel_id, channel_type
"""
_NEW_ID = {
    "postgresql": "gen_random_uuid()",
    # Django keeps a UUID as 32 hex digits on SQLite: random, without the version-4 bits.
    "sqlite": "lower(hex(randomblob(16)))",
}


def events_claim(*, now: datetime, limit: int, event_ids: Iterable | None = None,
                 occurred_before: datetime | None = None) -> list[ClaimedEvent]:
    """Mark up to `limit` waiting events (the oldest first) as fanned out at `now` and return
    them; only these events, of `event_ids` or that occurred before `occurred_before` if given."""
    filters, params = "", [_prep(Event, "fanned_out_at", now)]
    if occurred_before is not None:
        filters += " AND occurred_at < %s"
        params.append(_prep(Event, "occurred_at", occurred_before))
    if event_ids is not None:
        ids = [_prep(Event, "id", pk) for pk in event_ids]
        if not ids:
            return []
        filters += f" AND id IN ({', '.join(['%s'] * len(ids))})"
        params.extend(ids)
    params.append(limit)
    sql = _CLAIM.format(event=Event._meta.db_table, filters=filters, lock=_LOCK[connection.vendor])
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    to_uuid = Event._meta.pk.to_python
    claimed = []
    for pk, kind, workspace_ids, test_data in rows:
        test_data = _json(test_data)
        claimed.append(ClaimedEvent(
            id=to_uuid(pk), kind=kind, workspace_ids=_json(workspace_ids) or [],
            test_rule_id=test_data.get(TEST_RULE_KEY) if isinstance(test_data, dict) else None,
        ))
    return claimed


def deliveries_insert(*, events: list[ClaimedEvent], now: datetime) -> list[NewDelivery]:
    """One pending delivery, already marked queued at `now`, per channel each event matches and
    that has none for it yet, in one statement; the rows inserted are returned."""
    matched, tests, kinds = [], [], set()
    for event in events:
        workspaces = _workspaces(event)
        if event.test_rule_id is not None:
            rule_id = _uuid(AlertRule, "id", event.test_rule_id)
            if rule_id is None:
                logger.warning("Test event %s names no valid rule: %r", event.id, event.test_rule_id)
                continue
            tests.extend((_prep(Event, "id", event.id), w, rule_id) for w in workspaces)
        else:
            matched.extend((_prep(Event, "id", event.id), w, event.kind) for w in workspaces)
            kinds.add(event.kind)
    if not matched and not tests:
        return []
    patterns = [(kind, pattern) for kind in sorted(kinds) for pattern in matching_patterns(kind)]
    events_sql, events_params = _rows(("uuid", "uuid", "text"), matched)
    patterns_sql, patterns_params = _rows(("text", "text"), patterns)
    tests_sql, tests_params = _rows(("uuid", "uuid", "uuid"), tests)
    stamp = _prep(Delivery, "next_attempt_at", now)
    sql = _INSERT.format(
        events=events_sql, patterns=patterns_sql, tests=tests_sql,
        delivery=Delivery._meta.db_table, channel=AlertChannel._meta.db_table, rule=AlertRule._meta.db_table,
        new_id=_NEW_ID[connection.vendor],
    )
    params = [*events_params, *patterns_params, *tests_params, DeliveryStatus.PENDING.value, stamp, stamp, stamp,
              True]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    to_uuid = Delivery._meta.pk.to_python
    return [NewDelivery(to_uuid(pk), to_uuid(channel_id), channel_type) for pk, channel_id, channel_type in rows]


def _workspaces(event: ClaimedEvent) -> list:
    found = []
    for workspace_id in event.workspace_ids if isinstance(event.workspace_ids, list) else ():
        prepared = _uuid(AlertRule, "workspace", workspace_id)
        if prepared is None:
            logger.warning("Event %s names an invalid workspace id: %r", event.id, workspace_id)
        else:
            found.append(prepared)
    return found


def _rows(types: tuple[str, ...], rows: list[tuple]) -> tuple[str, list]:
    """A table of `rows` for a WITH clause, passed as one parameter per column (PostgreSQL
    arrays) or one in all (a JSON array on SQLite): the statement's text stays the same
    whatever the size of the burst."""
    if connection.vendor == "postgresql":
        columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in types]
        return f"SELECT * FROM unnest({', '.join(f'%s::{t}[]' for t in types)})", columns
    extract = ", ".join(f"json_extract(value, '$[{i}]')" for i in range(len(types)))
    return f"SELECT {extract} FROM json_each(%s)", [json.dumps(rows)]


def _json(value):
    return json.loads(value) if isinstance(value, str | bytes) else value


def _uuid(model, field: str, value):
    """`value` prepared for the UUID column `model.field`, or None when it is not a UUID."""
    try:
        return _prep(model, field, value)
    except (ValidationError, TypeError, ValueError, AttributeError):
        return None


def _prep(model, field: str, value):
    """`value` as the database takes it for `model.field` (UUIDs as hex on SQLite, and so on)."""
    return model._meta.get_field(field).get_db_prep_value(value, connection)
