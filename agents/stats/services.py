"""Writes of stats history: one sampler tick, and the retention purge."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from agents.backends.engine import backend_of
from agents.models import SERVING, Agent, StatsSample

from . import coordination
from .engines import collect_from_backends
from .sampler import Limits, StatsSource, collect
from .store import samples_insert

logger = logging.getLogger(__name__)

TICK_LOCK = "stats-sampler-tick"
SKIPPED_TICKS = "stats-sampler-skipped-ticks"
# What a backend reads to find a workload. Loading only these keeps a 1,000-agent tick cheap
# (no decryption of gateway tokens); a backend that reads another field still gets it, with
# one query of its own.
PLACEMENT_FIELDS = (
    "id",
    "name",
    "status",
    "runtime_family",
    "deploy_target",
    "execution_target_id",
    "sandbox_profile",
    "node",
    "container_id",
    "container_name",
    "gateway_host_port",
    "vcpu",
    "ram_mb",
    "disk_gb",
)
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
    return backend_of(agent).stats(agent)


def _execution_target(agent: Agent) -> str:
    return agent.execution_target_id


def stats_sample_tick(
    *,
    source: StatsSource | None = None,
    now: datetime | None = None,
    limits: Limits = Limits(),  # noqa: B008 - Limits is a frozen dataclass, safe to share as a default
) -> TickReport:
    """Record one history row for every running or warning agent that has a workload.

    Two queries whatever the fleet size: the agents, then one bulk insert (and one lookup per
    registered target for its backend). Engine calls run outside any transaction; only the
    insert is atomic. `source`: read every agent with it in threads (tests), instead of each
    engine's backend (agents.stats.engines). Every row of a tick carries the
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
            Agent.objects.filter(status__in=SERVING, is_external=False)
            .exclude(container_id="")
            .only(*PLACEMENT_FIELDS)
        )
        lane_of = _execution_target
        if source is None:
            collection = collect_from_backends(agents, lane_of=lane_of, limits=limits)
        else:
            collection = collect(agents, source=source, lane_of=lane_of, limits=limits)
        stored = samples_insert(recorded_at=recorded_at, snapshots=collection.snapshots)
        return TickReport(
            ran=True,
            agents=len(agents),
            stored=stored,
            failed=len(collection.failed),
            timed_out=len(collection.timed_out),
            skipped=len(collection.skipped),
            seconds=time.monotonic() - started,
        )


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
        batch, finished = _purge_batch(cutoff=cutoff, batch_rows=batch_rows)
        deleted += batch
        if finished:
            break
    return deleted


@transaction.atomic
def _purge_batch(*, cutoff: datetime, batch_rows: int) -> tuple[int, bool]:
    """Delete the oldest expired samples up to the time of the `batch_rows`-th one: about
    `batch_rows` rows (a tick's rows share a time and go together). Returns (deleted, whether
    nothing expired is left). A time boundary, not a LIMIT in a subquery, because that is
    what every database runs as written."""
    expired = StatsSample.objects.filter(recorded_at__lt=cutoff)
    boundary = list(expired.order_by("recorded_at").values_list("recorded_at", flat=True)[batch_rows - 1 : batch_rows])
    if not boundary:
        deleted, _ = expired.delete()
        return deleted, True
    deleted, _ = expired.filter(recorded_at__lte=boundary[0]).delete()
    return deleted, False
