"""What the last probe of each engine or registered target found (agents.services.engine_probe)."""

from __future__ import annotations

from django.db import models


class EngineState(models.TextChoices):
    OK = "ok"
    UNREACHABLE = "unreachable"


class EngineHealth(models.Model):
    """One row per execution target id ever probed. The row is the memory of the last state,
    so `engine.unreachable` / `engine.recovered` are emitted once per transition, not per probe."""

    target_id = models.CharField(primary_key=True, max_length=200)  # "docker", "remote:<id>" ...
    state = models.CharField(max_length=20, choices=EngineState.choices)
    reason = models.TextField(blank=True, default="")  # why it is unreachable, or the engine's version words
    checked_at = models.DateTimeField()
    changed_at = models.DateTimeField()  # when `state` last changed

    class Meta:
        verbose_name = "engine health"
        verbose_name_plural = "engine health"

    def __str__(self) -> str:
        return f"{self.target_id}: {self.state}"
