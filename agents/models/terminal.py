"""A record of every terminal opened on an agent (agents.terminal): who opened it, on which
agent, from where, when, and how it ended. Never what was typed or shown.

Rows outlive the agent and the user (their name and email are kept as they were). A row whose
web process died never gets its end from that process: its `seen_at` stops moving, and the next
terminal opened anywhere ends it as `lost` (agents.terminal.records).
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone


class TerminalEnd(models.TextChoices):
    EXITED = "exited", "the shell exited"
    CLOSED = "closed", "closed by the client"
    IDLE = "idle", "idle timeout"
    REVOKED = "revoked", "access or session ended"
    ERROR = "error", "the engine's connection failed"
    LOST = "lost", "the server serving it stopped"


class TerminalVia(models.TextChoices):
    API = "api", "API"
    CONSOLE = "console", "console"


class TerminalSession(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    agent = models.ForeignKey("agents.Agent", null=True, on_delete=models.SET_NULL, related_name="terminal_sessions")
    agent_name = models.CharField(max_length=100)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL,
                             related_name="terminal_sessions")
    user_email = models.EmailField(max_length=255)
    via = models.CharField(max_length=10, choices=TerminalVia.choices, default=TerminalVia.API)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    seen_at = models.DateTimeField(default=timezone.now)  # last vouched for by the process serving it
    ended_at = models.DateTimeField(null=True, blank=True)
    end_reason = models.CharField(max_length=10, choices=TerminalEnd.choices, blank=True)

    class Meta:
        ordering = ["-started_at"]
        indexes = [
            models.Index(fields=["agent", "-started_at"], name="agents_term_agent_started"),
            models.Index(fields=["seen_at"], condition=models.Q(ended_at__isnull=True), name="agents_term_open_seen"),
        ]

    def __str__(self) -> str:
        return f"terminal on {self.agent_name} by {self.user_email} at {self.started_at:%Y-%m-%d %H:%M}"
