"""Fan-out's one statement: INSERT ... SELECT the deliveries of the channels an event matches.

The database does the matching: a rule matches when its pattern is one of the patterns that
match the event's kind (`patterns.matching_patterns`), so one round trip finds the channels and
creates their deliveries, inside the emitter's transaction (fleet.events). The ORM has no
INSERT ... SELECT; the SQL is written for Fleet's two databases, PostgreSQL and SQLite (3.35+
for RETURNING).
"""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from fleet.models import Event

from ..models import AlertChannel, AlertRule, ChannelType, Delivery, DeliveryStatus
from ..patterns import matching_patterns

_NEW_ID = {
    "postgresql": "gen_random_uuid()",
    # Django keeps a UUID as 32 hex digits on SQLite: random, without the version-4 bits.
    "sqlite": "lower(hex(randomblob(16)))",
}

_INSERT = """
INSERT INTO {delivery} (id, rule_id, channel_id, event_id, channel_type, status, attempts,
                        next_attempt_at, queued_at, created_at)
SELECT {new_id}, c.rule_id, c.id, %s, c.type, %s, 0, %s, CASE WHEN c.type = %s THEN %s END, %s
FROM {channel} c JOIN {rule} r ON r.id = c.rule_id
WHERE r.workspace_id IN ({workspaces}) AND {match}
ON CONFLICT DO NOTHING
RETURNING id, rule_id, channel_id, channel_type
"""
_ENABLED_RULES = "r.enabled = %s AND r.event_pattern IN ({patterns})"
_ONE_RULE = "c.rule_id = %s"  # a rule's test: that rule alone, whatever its pattern, even disabled


def deliveries_insert(*, event: Event, now: datetime, test_rule_id=None) -> list[Delivery]:
    """Insert one pending delivery per matching channel that has none for this event yet; the
    rows inserted are returned. Emails are marked queued: fan-out makes their first attempt."""
    if not event.workspace_ids:
        return []
    workspaces = [_prep(AlertRule, "workspace", w) for w in event.workspace_ids]
    if test_rule_id:
        match, match_params = _ONE_RULE, [_prep(AlertChannel, "rule", test_rule_id)]
    else:
        patterns = matching_patterns(event.kind)
        match = _ENABLED_RULES.format(patterns=", ".join(["%s"] * len(patterns)))
        match_params = [True, *patterns]
    stamp = _prep(Delivery, "next_attempt_at", now)
    sql = _INSERT.format(
        delivery=Delivery._meta.db_table,
        channel=AlertChannel._meta.db_table,
        rule=AlertRule._meta.db_table,
        new_id=_NEW_ID[connection.vendor],
        workspaces=", ".join(["%s"] * len(workspaces)),
        match=match,
    )
    params = [_prep(Delivery, "event", event.pk), DeliveryStatus.PENDING.value, stamp, ChannelType.EMAIL.value,
              stamp, stamp, *workspaces, *match_params]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    to_uuid = Delivery._meta.pk.to_python
    return [
        _delivery(
            id=to_uuid(pk), rule_id=to_uuid(rule_id), channel_id=to_uuid(channel_id), event_id=event.pk,
            channel_type=channel_type, status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=now,
            queued_at=now if channel_type == ChannelType.EMAIL else None, created_at=now,
        )
        for pk, rule_id, channel_id, channel_type in rows
    ]


def _delivery(**values) -> Delivery:
    # Every column in order, as a row read from the database: Model.__init__ by keyword was a
    # third of fan-out's Python time.
    return Delivery.from_db(connection.alias, None, [values.get(f.attname) for f in Delivery._meta.concrete_fields])


def _prep(model, field: str, value):
    """`value` as the database takes it for `model.field` (UUIDs as hex on SQLite, and so on)."""
    return model._meta.get_field(field).get_db_prep_value(value, connection)
