"""Output shapes of the usage routes.

UsageIngestOut and UsagePullOut write their bodies. The cost report does not go through its serializers: shaped by
them, a report of 1,000 agents costs about 50 ms more (docs/performance.md allows 200 ms for all
of it), so agents.usage.cost builds the dicts itself and CostReportOut documents them; a test
proves that CostReportOut writes a report into the same bytes (tests/agents/usage/test_usage_bodies.py).
"""

from __future__ import annotations

from rest_framework import serializers

from fleet.api.serializers import IntegerField, NumberField


class UsageIngestOut(serializers.Serializer):
    """How many events were stored, and how many were already known by their request_id."""

    accepted = IntegerField()
    duplicates = IntegerField()


class UsagePullOut(serializers.Serializer):
    """Per (UTC day, provider, model) the runtime reported: how many brought new usage, how many
    the record already covered."""

    pulled = IntegerField()
    unchanged = IntegerField()


class ModelCostOut(serializers.Serializer):
    model = serializers.CharField()
    provider = serializers.CharField()
    input_tokens = IntegerField()
    output_tokens = IntegerField()
    total_tokens = IntegerField()
    rate_source = serializers.CharField(help_text="where the price came from, e.g. runtime or catalog")
    token_cost = NumberField(help_text="USD")


class TokenCostsOut(serializers.Serializer):
    models = ModelCostOut(many=True, help_text="most expensive first")


class CostDetailsOut(serializers.Serializer):
    tokens = TokenCostsOut()


class AgentCostOut(serializers.Serializer):
    agentId = serializers.UUIDField()  # noqa: N815 - the spec's names
    agentName = serializers.CharField()  # noqa: N815
    token_cost = NumberField(help_text="USD")
    total_cost = NumberField(help_text="USD")
    input_tokens = IntegerField()
    output_tokens = IntegerField()
    total_tokens = IntegerField()
    cost_details = CostDetailsOut()


class WorkspaceCostOut(serializers.Serializer):
    workspaceId = serializers.UUIDField()  # noqa: N815
    workspaceName = serializers.CharField()  # noqa: N815
    totalUsd = NumberField()  # noqa: N815
    perAgent = AgentCostOut(many=True, help_text="most expensive first")  # noqa: N815


class UnassignedCostOut(serializers.Serializer):
    totalUsd = NumberField()  # noqa: N815
    perAgent = AgentCostOut(many=True)  # noqa: N815


class CostReportOut(serializers.Serializer):
    """Token cost per workspace and per agent over whole UTC days."""

    periodDays = IntegerField()  # noqa: N815
    periodStart = serializers.DateField(format=None)  # noqa: N815
    periodEnd = serializers.DateField(format=None)  # noqa: N815
    workspaceTotalUsd = NumberField(help_text="sum over workspaces: an agent in two counts twice")  # noqa: N815
    uniqueFleetTotalUsd = NumberField(help_text="every agent of the report once")  # noqa: N815
    workspaces = WorkspaceCostOut(many=True)
    unassigned = UnassignedCostOut(help_text="the caller's own agents in no workspace (empty for an API key)")
