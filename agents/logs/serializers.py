"""The logs route's body, for the OpenAPI document (rows are built by sse.log_line_data)."""

from rest_framework import serializers


class LogLineOut(serializers.Serializer):
    ts = serializers.DateTimeField(help_text="When the engine recorded the line (UTC)")
    stream = serializers.ChoiceField(choices=["stdout", "stderr"])
    line = serializers.CharField()
