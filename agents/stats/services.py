"""Writes of stats history: one sampler tick, and the retention purge."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from agents.models import Agent, StatsSample, Status

from . import coordination
from .sampler import Collection, Limits, StatsSource, collect

logger = logging.getLogger(__name__)

TICK_LOCK = "stats-sampler-tick"
SKIPPED_TICKS = "stats-sampler-skipped-ticks"
SAMPLED_STATUSES = (Status.RUNNING, Status.WARNING)
RETENTION = timedelta(hours=24)
PURGE_BATCH_ROWS = 10_000
PURGE_MAX_BATCHES = 500  # one run stops after 5 M rows; the next run carries on


@dataclass(frozen=True)
class TickReport:
    ran: bool  # False: another tick still held the lock, this one was skipped
    agents: int = 0
    stored: int = 0
    failed: int = 0
    timed_out: int = 0
    skipped: int = 0
    seconds: float = 0.0


def backend_stats(agent: Agent):
    """The live snapshot through the agent's backend (the sampler's default source)."""
    from agents.backends.registry import backend_for

    return backend_for(agent).stats(agent)


def stats_sample_tick(
    *, source: StatsSource = backend_stats, now: datetime | None = None, limits: Limits = Limits()
) -> TickReport:
    """Record one history row for every running or warning agent that has a workload.

    Two queries whatever the fleet size: the agents, then one bulk insert. Engine calls run
    outside any transaction; only the insert is atomic. Every row of a tick carries the
    tick's time, so the buckets of a history read line up across agents.
    """
    with coordination.held(TICK_LOCK) as acquired:
        if not acquired:
            skipped = coordination.count(SKIPPED_TICKS)
            logger.warning("stats sampler tick skipped: the previous one is still running (%d so far)", skipped)
            return TickReport(ran=False)
        started = time.monotonic()
        recorded_at = now or timezone.now()
        agents = list(
            Agent.objects.filter(status__in=SAMPLED_STATUSES, is_external=False).exclude(container_id="")
        )
        collection = collect(agents, source=source, lane_of=lambda agent: agent.execution_target_id, limits=limits)
        stored = _store(_rows(collection, recorded_at))
        return TickReport(
            ran=True,
            agents=len(agents),
            stored=stored,
            failed=len(collection.failed),
            timed_out=len(collection.timed_out),
            skipped=len(collection.skipped),
            seconds=time.monotonic() - started,
        )


def _rows(collection: Collection, recorded_at: datetime) -> list[StatsSample]:
    return [
        StatsSample(
            agent_id=agent_id,
            recorded_at=recorded_at,
            cpu_percent=snap.cpu_percent,
            memory_usage_mb=snap.memory_usage_mb,
            memory_limit_mb=snap.memory_limit_mb,
            memory_percent=snap.memory_percent,
            network_rx_mb=snap.network_rx_mb,
            network_tx_mb=snap.network_tx_mb,
            disk_read_mb=snap.disk_read_mb,
            disk_write_mb=snap.disk_write_mb,
            pids=snap.pids,
        )
        for agent_id, snap in collection.snapshots.items()
    ]


def _store(rows: list[StatsSample]) -> int:
    """One bulk insert. An agent deleted while its engine was being asked fails the
    foreign key; then the rows of agents that still exist are stored instead."""
    if not rows:
        return 0
    try:
        with transaction.atomic():
            StatsSample.objects.bulk_create(rows)
        return len(rows)
    except IntegrityError:
        existing = set(Agent.objects.filter(pk__in=[r.agent_id for r in rows]).values_list("pk", flat=True))
        kept = [r for r in rows if r.agent_id in existing]
        with transaction.atomic():
            StatsSample.objects.bulk_create(kept, ignore_conflicts=True)
        return len(kept)


def stats_purge(
    *, now: datetime | None = None, batch_rows: int = PURGE_BATCH_ROWS, max_batches: int = PURGE_MAX_BATCHES
) -> int:
    """Delete samples older than the retention, oldest first, in short transactions.

    Each batch is its own small DELETE (found through the recorded_at index), so no lock
    is held for long and the sampler's inserts go on meanwhile. Returns the rows deleted.
    """
    cutoff = (now or timezone.now()) - RETENTION
    deleted = 0
    for _ in range(max_batches):
        batch = _purge_batch(cutoff=cutoff, batch_rows=batch_rows)
        deleted += batch
        if batch < batch_rows:
            break
    return deleted


@transaction.atomic
def _purge_batch(*, cutoff: datetime, batch_rows: int) -> int:
    oldest = StatsSample.objects.filter(recorded_at__lt=cutoff).order_by("recorded_at")[:batch_rows]
    deleted, _ = StatsSample.objects.filter(pk__in=oldest.values("pk")).delete()
    return deleted
