"""The body of POST /api/agents/:id/terminal/session."""

from rest_framework import serializers


class TerminalTicketOut(serializers.Serializer):
    url = serializers.CharField(help_text="The terminal's ws(s) URL, carrying a single-use ticket")
    expiresAt = serializers.DateTimeField(source="expires_at", help_text="When the ticket lapses (60 s)")  # noqa: N815
