"""The model an agent answers with: a saved provider key (llm.ProviderKey) and a model name.

An agent without a row uses the platform default (DEFAULT_LLM_KEY, DEFAULT_LLM_MODEL), or none.
The key itself stays in llm's store (encrypted); the row only points at it. The key routes refuse
to delete a key an agent uses (409 key_in_use); a key that goes with its user or workspace takes
the choices with it, and those agents are given the default, or no model, again
(agents.llm_model.services.on_key_deleted).
"""

from __future__ import annotations

from django.db import models


class AgentModel(models.Model):
    agent = models.OneToOneField("agents.Agent", primary_key=True, on_delete=models.CASCADE,
                                 related_name="llm_model")
    key = models.ForeignKey("llm.ProviderKey", on_delete=models.CASCADE, related_name="agent_models")
    name = models.CharField(max_length=200)
    fallbacks = models.JSONField(default=list, blank=True)  # model names of the same key, in order
    updated_at = models.DateTimeField(auto_now=True)
    # What reached the runtime: when (null: not yet, or changed since) and the last refusal.
    applied_at = models.DateTimeField(null=True, blank=True)
    apply_error = models.CharField(max_length=500, blank=True, default="")

    def __str__(self) -> str:
        return f"{self.name} for agent {self.agent_id}"  # never the key
