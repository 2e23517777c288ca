"""Reads of the alerts app. Callers have resolved workspace access (workspaces.access) first."""

from __future__ import annotations

from django.db import connection
from django.db.models import Prefetch, Q, QuerySet, TextField, Value
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Coalesce

from agents.models import Agent
from agents.targets.access import hidden_deploy_targets
from fleet.api.principal import Principal
from fleet.errors import NotFound
from fleet.models import Event

from .models import AlertChannel, AlertRule


def alert_rules_of_workspace(*, workspace_id) -> QuerySet[AlertRule]:
    channels = Prefetch("channels", queryset=AlertChannel.objects.order_by("position"))
    return AlertRule.objects.filter(workspace_id=workspace_id).prefetch_related(channels).order_by("created_at", "id")


def alert_rule_get(*, workspace_id, rule_id) -> AlertRule:
    """The rule, only if it belongs to the workspace; otherwise 404 (never a hint it exists)."""
    rule = alert_rules_of_workspace(workspace_id=workspace_id).filter(pk=rule_id).first()
    if rule is None:
        raise NotFound("Alert rule not found.")
    return rule


def events_of_workspace(*, principal: Principal, workspace_id, limit: int) -> list[Event]:
    """The workspace's most recent events, newest first, without those of agents the caller
    never sees (agents.targets.access.hidden_deploy_targets: a key sees no Remote Docker agent):
    an agent that still exists is judged by its row, a deleted one by the deploy target its
    events recorded (fleet.events.agent_summary)."""
    events = Event.objects.order_by("-occurred_at", "-id")
    hidden = hidden_deploy_targets(principal)
    if hidden:
        hidden_agents = Agent.objects.filter(deploy_target__in=hidden).values("pk")
        # Coalesced: an event recording no deploy target must compare false, not NULL (which
        # an exclude would drop).
        recorded = Coalesce(KeyTextTransform("deployTarget", KeyTransform("agent", "data")), Value(""),
                            output_field=TextField())
        events = events.alias(recorded_target=recorded).exclude(
            Q(agent_id__in=hidden_agents) | Q(recorded_target__in=hidden))
    if connection.vendor == "postgresql":
        events = events.filter(workspace_ids__contains=[str(workspace_id)])
    else:
        # SQLite has no JSON containment; the list is stored as JSON text, and a quoted UUID
        # can only occur there as one whole element.
        events = events.filter(workspace_ids__icontains=f'"{workspace_id}"')
    return list(events[:limit])


def alert_rule_recipient_count(*, rule: AlertRule) -> int:
    """How many destinations a test of the rule reaches: each email address and each webhook."""
    return sum(len(channel.config.get("to") or []) or 1 for channel in rule.channels.all())
