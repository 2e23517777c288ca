"""Token usage: raw events as runtimes report them, daily rollups, and operator rate overrides.

Money is integer micro-dollars everywhere (1 USD = 1,000,000). Reads never aggregate the raw
table: ingestion folds every accepted event into three rollups in the same transaction, so the
cost report reads `UsageDaily`, and budgets and the dashboard read `AgentSpendDay` for a day or
a week and `AgentSpendMonth` for a month (the sweep over 10,000 agents must take under a
second, each dashboard panel under 50 ms).
"""

from __future__ import annotations

from django.db import models

from .agent import Agent


class RateSource(models.TextChoices):
    RUNTIME = "runtime"  # the runtime reported the cost with the event
    OVERRIDE = "override"  # an operator's ModelRate
    CATALOG = "catalog"  # the built-in, effective-dated price table
    UNPRICED = "unpriced"  # no rate known: cost 0
    GATEWAY = "gateway"  # counted by Fleet's model gateway from the provider's own figures, priced by the book


class UsageEvent(models.Model):
    """One LLM call reported by a runtime; `(agent, request_id)` makes ingestion idempotent."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    request_id = models.CharField(max_length=200)
    model = models.CharField(max_length=200)
    provider = models.CharField(max_length=100)
    input_tokens = models.BigIntegerField()
    output_tokens = models.BigIntegerField()
    cost_micros = models.BigIntegerField()
    rate_source = models.CharField(max_length=10, choices=RateSource.choices)
    occurred_at = models.DateTimeField()
    received_at = models.DateTimeField()

    class Meta:
        constraints = [
            # Also the index of every per-agent read.
            models.UniqueConstraint(fields=("agent", "request_id"), name="agents_usage_agent_request_unique"),
        ]
        verbose_name = "usage event"

    def __str__(self) -> str:
        return f"{self.model} {self.input_tokens}+{self.output_tokens} tokens ({self.request_id})"


class UsageDaily(models.Model):
    """Per agent, UTC day, model, provider and rate source: the cost report's table."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    day = models.DateField()
    model = models.CharField(max_length=200)
    provider = models.CharField(max_length=100)
    rate_source = models.CharField(max_length=10, choices=RateSource.choices)
    input_tokens = models.BigIntegerField(default=0)
    output_tokens = models.BigIntegerField(default=0)
    cost_micros = models.BigIntegerField(default=0)
    events = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=("agent", "day", "model", "provider", "rate_source"), name="agents_usagedaily_unique"
            ),
        ]
        verbose_name = "daily usage"
        verbose_name_plural = "daily usage"

    def __str__(self) -> str:
        return f"{self.day} {self.model} ({self.provider}, {self.rate_source}): {self.events} events"


class AgentSpendDay(models.Model):
    """Per agent and UTC day: what budgets compare against their caps."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    day = models.DateField()
    cost_micros = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("agent", "day"), name="agents_spendday_unique")]
        # The fleet's spend of one day (the dashboard) without reading the month's rows. Never
        # changed by the upsert, so adding to a row stays a HOT update.
        indexes = [models.Index(fields=("day",), name="agents_spendday_day")]

    def __str__(self) -> str:
        return f"{self.day}: {self.cost_micros} micro-USD"


class AgentSpendMonth(models.Model):
    """Per agent and UTC calendar month: the sum of its AgentSpendDay rows of that month, added to
    in the transaction that adds to them. Monthly budgets and the dashboard read one row per
    agent here instead of summing up to 31."""

    id = models.BigAutoField(primary_key=True)
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    month = models.DateField(help_text="The month's first day (agents.budgets.periods.month_start).")
    cost_micros = models.BigIntegerField(default=0)

    class Meta:
        # Month first: a month's rows for the whole fleet are one range of the index, and one
        # agent's month is still a single probe (the upsert's conflict target, in any order).
        constraints = [models.UniqueConstraint(fields=("month", "agent"), name="agents_spendmonth_unique")]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m}: {self.cost_micros} micro-USD"


class ModelRate(models.Model):
    """An operator's price for a model, effective from a UTC day (beats the built-in table)."""

    model = models.CharField(max_length=200, help_text="Model id as runtimes report it, e.g. gpt-4o.")
    provider = models.CharField(max_length=100, blank=True, default="", help_text="Empty: any provider.")
    input_usd_per_mtok = models.DecimalField("input USD per million tokens", max_digits=12, decimal_places=6)
    output_usd_per_mtok = models.DecimalField("output USD per million tokens", max_digits=12, decimal_places=6)
    effective_from = models.DateField(help_text="First UTC day the rate applies to.")
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=("model", "provider", "effective_from"), name="agents_modelrate_unique"),
        ]
        ordering = ("model", "provider", "-effective_from")
        verbose_name = "model rate override"

    def __str__(self) -> str:
        return f"{self.model} from {self.effective_from}"
