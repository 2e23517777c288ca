"""Output shapes of the stats routes (the spec's "Stats snapshot" and "Stats history record").

The snapshot is written by StatsSnapshotOut. History records are not: up to 2,000 of them are
answered as the query reads them, because a serializer would cost about 14 ms per response
against a 50 ms target (docs/performance.md), so StatsRecordOut is derived from the same field
table the query reads, RECORD_FIELDS (tests/agents/stats/test_stats_bodies.py).
"""

from __future__ import annotations

from rest_framework import serializers

from agents.models.stats import RECORD_FIELDS
from fleet.api.serializers import IntegerField, NumberField, TimestampField


class StatsSnapshotOut(serializers.Serializer):
    """One live reading of the agent's container (MB are bytes / 1024^2)."""

    cpu_percent = NumberField(help_text="across all cores")
    memory_usage_mb = NumberField(help_text="excluding page cache")
    memory_limit_mb = NumberField()
    memory_percent = NumberField()
    network_rx_mb = NumberField(help_text="total over all interfaces")
    network_tx_mb = NumberField()
    disk_read_mb = NumberField(help_text="total block-device reads")
    disk_write_mb = NumberField()
    pids = IntegerField()
    uptime_seconds = NumberField(help_text="since the container last started")
    running = serializers.BooleanField()


StatsRecordOut = type(
    "StatsRecordOut",
    (serializers.Serializer,),
    {
        "__module__": __name__,
        "__doc__": "One sample of the agent's stats, or the summary of a bucket of them when the window holds "
                   "more than 2,000: gauges (CPU, memory, pids) averaged, cumulative counters at their maximum.",
        "recorded_at": TimestampField(help_text="the sample's time, or its bucket's start"),
        # Numbers all: in a bucket even pids is an average.
        **{name: NumberField() for name in RECORD_FIELDS},
    },
)
