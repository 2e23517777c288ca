"""Shapes of /agents/:id/model (documentation and output; the body is checked by choice_parse)."""

from rest_framework import serializers

from fleet.api.fields import RawStringField


class ModelIn(serializers.Serializer):
    keyId = serializers.UUIDField(help_text="a saved provider key: yours, or one of a workspace the agent is in "  # noqa: N815
                                  "where you are at least editor (else 403 key_not_usable)")
    name = RawStringField(help_text="the provider's model id, e.g. gpt-4o-mini or claude-sonnet-4-20250514")
    fallbacks = serializers.ListField(child=RawStringField(), required=False, max_length=5,
                                      help_text="models of the same key tried in order when the first fails")
    modelRouting = serializers.ChoiceField(choices=["direct", "gateway"], required=False,  # noqa: N815
                                           help_text="direct: the runtime calls the provider with the key; gateway: "
                                           "it calls Fleet's /llm/v1 with its own token and the key stays in Fleet "
                                           "(metered exactly, hard caps refuse a call before it is made); absent: "
                                           "unchanged")


class ModelOut(serializers.Serializer):
    keyId = serializers.UUIDField(allow_null=True)  # noqa: N815
    provider = serializers.CharField(allow_null=True)
    name = serializers.CharField(allow_null=True)
    fallbacks = serializers.ListField(child=serializers.CharField())
    source = serializers.ChoiceField(choices=["agent", "default", "none"],
                                     help_text="the agent's own choice, the platform default, or no model")
    modelRouting = serializers.ChoiceField(choices=["direct", "gateway"],  # noqa: N815
                                           help_text="where the runtime sends its model calls")
    appliedAt = serializers.DateTimeField(allow_null=True,  # noqa: N815
                                          help_text="when the runtime took this choice; null until then")
    applyError = serializers.CharField(allow_null=True, help_text="why the runtime did not take it")  # noqa: N815
