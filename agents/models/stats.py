"""Stats history: one compact row per agent per sampler tick.

The table holds 24 hours of 10-second samples for the whole fleet (8.64 million rows for
1,000 agents), so a row is kept small: no surrogate id (the primary key is
(agent, recorded_at), which is also the index every history read walks), no JSON,
4-byte floats for gauges and 8-byte floats only for the cumulative counters, which grow
large and must keep their precision.

On PostgreSQL the primary key also INCLUDEs the sample values (migration 0004), so a
history read is an index-only scan: a tick writes the whole fleet side by side, which
spreads one agent's day over thousands of heap pages but keeps it together in the index.
"""

from __future__ import annotations

from django.db import models

from .agent import Agent

GAUGE_FIELDS = ("cpu_percent", "memory_usage_mb", "memory_limit_mb", "memory_percent", "pids")
COUNTER_FIELDS = ("network_rx_mb", "network_tx_mb", "disk_read_mb", "disk_write_mb")
# The spec's "Stats history record" fields besides recorded_at, in its order.
RECORD_FIELDS = (
    "cpu_percent",
    "memory_usage_mb",
    "memory_limit_mb",
    "memory_percent",
    "network_rx_mb",
    "network_tx_mb",
    "disk_read_mb",
    "disk_write_mb",
    "pids",
)


class RealField(models.FloatField):
    """A 4-byte float on PostgreSQL: gauges need about 7 significant digits, not 15."""

    def db_type(self, connection):
        if connection.vendor == "postgresql":
            return "real"
        return super().db_type(connection)


class StatsSample(models.Model):
    # Declaration order is column order: 8-byte columns first, so no alignment padding.
    pk = models.CompositePrimaryKey("agent", "recorded_at")
    # No index of its own: the primary key (agent, recorded_at) already leads with it.
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+", db_index=False)
    recorded_at = models.DateTimeField()
    network_rx_mb = models.FloatField()
    network_tx_mb = models.FloatField()
    disk_read_mb = models.FloatField()
    disk_write_mb = models.FloatField()
    cpu_percent = RealField()
    memory_usage_mb = RealField()
    memory_limit_mb = RealField()
    memory_percent = RealField()
    pids = models.IntegerField()

    class Meta:
        # The purge finds old rows by time. Not BRIN: purged pages are refilled with new
        # rows, which widens block-range summaries until they match everything. A B-tree
        # stays exact and deduplicates well (every row of a tick shares its timestamp).
        indexes = [models.Index(fields=["recorded_at"], name="agents_stats_recorded_idx")]

    def __str__(self) -> str:
        return f"{self.agent_id} at {self.recorded_at:%Y-%m-%d %H:%M:%S}"
