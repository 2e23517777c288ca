"""Writes on alert rules: create, update, delete, and the test that fires a synthetic event."""

from __future__ import annotations

import json

from django.db import transaction

from fleet import events
from fleet.errors import ValidationFailed
from fleet.redaction import NOTHING_TO_KEEP
from fleet.services import model_update

from ..channel_config import ChannelSpec
from ..models import AlertChannel, AlertRule, ChannelType
from ..patterns import synthetic_test_kind
from .delivery import delivery_attempt
from .enqueue import deliveries_publish_by_channel
from .fanout import TEST_RULE_KEY, events_fan_out

_UNSET = object()


@transaction.atomic
def alert_rule_create(
    *, workspace, created_by, name: str, event_pattern: str, channels: list[ChannelSpec], enabled: bool = True
) -> AlertRule:
    rule = AlertRule.objects.create(
        workspace=workspace, created_by=created_by, name=name, event_pattern=event_pattern, enabled=enabled
    )
    _channels_replace(rule=rule, specs=channels)
    return rule


@transaction.atomic
def alert_rule_update(
    *, rule: AlertRule, name=_UNSET, event_pattern=_UNSET, channels=_UNSET, enabled=_UNSET
) -> AlertRule:
    """Change the given fields; `channels`, when given, replaces the whole list."""
    changes = {"name": name, "event_pattern": event_pattern, "enabled": enabled}
    rule, changed = model_update(
        instance=rule, fields=changes, data={k: v for k, v in changes.items() if v is not _UNSET}
    )
    if channels is not _UNSET:
        _channels_replace(rule=rule, specs=channels)
        if not changed:  # updated_at moves when only the channels change too
            rule.save(update_fields=["updated_at"])
    return rule


def _channels_replace(*, rule: AlertRule, specs: list[ChannelSpec]) -> None:
    """Store `specs` as the rule's channels, keeping the row (and its pending deliveries) of
    every channel whose type and configuration did not change."""
    existing = list(rule.channels.all())
    kept_ids = set()
    for position, spec in enumerate(specs):
        secret = _secret_for(spec, existing, position)
        header_values = _header_values_for(spec, existing, position)
        same = next(
            (c for c in existing if c.id not in kept_ids and c.type == spec.type and c.config == spec.config), None
        )
        if same is not None:
            kept_ids.add(same.id)
            same.position, same.secret, same.header_values = position, secret, header_values
            same.save(update_fields=["position", "secret", "header_values"])
        else:
            created = AlertChannel.objects.create(
                rule=rule, position=position, type=spec.type, config=spec.config, secret=secret,
                header_values=header_values,
            )
            kept_ids.add(created.id)
    rule.channels.exclude(id__in=kept_ids).delete()


def _header_values_for(spec: ChannelSpec, existing: list[AlertChannel], position: int) -> str | None:
    """The encrypted headers to store: those given, plus the stored value of each header sent
    back as "[REDACTED]" (same url and name)."""
    if spec.type != ChannelType.WEBHOOK:
        return None
    values = dict(spec.header_values)
    if spec.kept_headers:
        url = spec.config.get("url")
        stored = next((c.headers for c in existing if c.config.get("url") == url and c.header_values), {})
        missing = sorted(name for name in spec.kept_headers if name not in stored)
        if missing:
            raise ValidationFailed(
                {f"channels.{position}.headers.{name}": NOTHING_TO_KEEP for name in missing}
            )
        values.update({name: stored[name] for name in spec.kept_headers})
    ordered = {name: values[name] for name in spec.config.get("headers", {})}
    return json.dumps(ordered) if ordered else None


def _secret_for(spec: ChannelSpec, existing: list[AlertChannel], position: int):
    """The secret to store; "[REDACTED]" sent back keeps the stored secret of the same URL."""
    if not spec.keep_secret:
        return spec.secret
    url = spec.config.get("url")
    stored = next((c.secret for c in existing if c.config.get("url") == url and c.secret), None)
    if stored is None:
        raise ValidationFailed(
            {f"channels.{position}.secret": f"{NOTHING_TO_KEEP} (None is stored for this URL.)"}
        )
    return stored


@transaction.atomic
def alert_rule_delete(*, rule: AlertRule) -> None:
    rule.delete()


@transaction.atomic
def alert_rule_test(*, rule: AlertRule):
    """Emit the rule's synthetic test event and fan it out at once, in this transaction (to this
    rule only): once it commits, the emails are sent inline, before the route answers, and the
    webhooks are queued. Nothing is sent should the transaction roll back."""
    event = events.emit(
        synthetic_test_kind(rule.event_pattern),
        message=f"Test alert for the rule '{rule.name}'.",
        workspace_ids=[rule.workspace_id],
        data={TEST_RULE_KEY: str(rule.id)},
        test=True,
    )
    fanned = events_fan_out(event_ids=[event.pk])
    if event.pk in fanned.event_ids:
        event.fanned_out_at = fanned.at  # so its after-commit subscriber requests no dispatch
    webhooks = [d for d in fanned.deliveries if d.channel_type == ChannelType.WEBHOOK]
    if webhooks:
        # robust: a broker outage must not fail the route after the commit; the sweep catches up.
        transaction.on_commit(lambda: deliveries_publish_by_channel(webhooks), robust=True)
    for delivery in fanned.deliveries:
        if delivery.channel_type == ChannelType.EMAIL:
            transaction.on_commit(lambda pk=delivery.id: delivery_attempt(delivery_id=pk), robust=True)
    return event
