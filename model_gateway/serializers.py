"""Shapes of /agents/:id/model-gateway (documentation and output; the body is checked by
services.limits_set)."""

from rest_framework import serializers

from fleet.api.fields import RawStringField


class LimitsIn(serializers.Serializer):
    requestsPerMinute = serializers.IntegerField(required=False, allow_null=True, min_value=1,  # noqa: N815
                                                 help_text="model calls a minute; null or absent: no limit")
    tokensPerMinute = serializers.IntegerField(required=False, allow_null=True, min_value=1,  # noqa: N815
                                               help_text="input and output tokens a minute, as the provider "
                                               "counts them; null or absent: no limit")
    allowedModels = serializers.ListField(child=RawStringField(), required=False, max_length=50,  # noqa: N815
                                          help_text="the only models the agent may call; empty: any model "
                                          "of its key")


class LimitsOut(LimitsIn):
    modelRouting = serializers.ChoiceField(choices=["direct", "gateway"],  # noqa: N815
                                           help_text="the limits apply to calls through the gateway only")


class TrafficHourOut(serializers.Serializer):
    hour = serializers.DateTimeField()
    calls = serializers.IntegerField(help_text="calls forwarded to the provider")
    inputTokens = serializers.IntegerField()  # noqa: N815
    outputTokens = serializers.IntegerField()  # noqa: N815
    costUsd = serializers.FloatField()  # noqa: N815
    refusals = serializers.DictField(child=serializers.IntegerField(),
                                     help_text="calls refused or failed, by code (budget_exceeded, rate_limited, "
                                     "model_not_allowed, provider_<status>, ...)")


class TrafficTotalsOut(serializers.Serializer):
    calls = serializers.IntegerField()
    inputTokens = serializers.IntegerField()  # noqa: N815
    outputTokens = serializers.IntegerField()  # noqa: N815
    costUsd = serializers.FloatField()  # noqa: N815
    refusals = serializers.DictField(child=serializers.IntegerField())


class TrafficOut(serializers.Serializer):
    since = serializers.DateTimeField(help_text="the first hour of the window")
    hours = serializers.IntegerField()
    series = TrafficHourOut(many=True, help_text="hours with traffic, oldest first")
    totals = TrafficTotalsOut()
