"""stats_sample_tick: which agents are sampled, one bulk insert, failures, no overlapping ticks."""

from __future__ import annotations

import asyncio
import threading
import time
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.backends.base import BackendUnreachable, StatsSnapshot, WorkloadSpec
from agents.backends.docker import DockerBackend
from agents.models import Agent, StatsSample
from agents.stats import coordination
from agents.stats.sampler import Limits
from agents.stats.services import TICK_LOCK, stats_sample_tick
from tests.factories.agents import AgentFactory
from tests.support import in_thread

NOW = datetime(2026, 3, 1, 12, 0, 10, tzinfo=UTC)


def snapshot_of(agent) -> StatsSnapshot:
    """A distinct, recognisable snapshot per agent."""
    n = float(agent.gateway_host_port or 0)
    return StatsSnapshot(
        cpu_percent=12.5,
        memory_usage_mb=100.0,
        memory_limit_mb=512.0,
        memory_percent=19.53125,
        network_rx_mb=n,
        network_tx_mb=2.0,
        disk_read_mb=3.0,
        disk_write_mb=4.0,
        pids=7,
        uptime_seconds=99.0,
        running=True,
    )


@pytest.mark.django_db
def test_a_tick_stores_one_row_for_each_running_or_warning_agent_with_a_workload():
    running, warning = AgentFactory(status="running"), AgentFactory(status="warning")
    AgentFactory(status="stopped")
    AgentFactory(status="queued", container_id="")
    AgentFactory(status="error")
    AgentFactory(status="running", container_id="")  # no workload yet
    AgentFactory(status="running", container_id="", is_external=True, deploy_target="external")

    report = stats_sample_tick(source=snapshot_of, now=NOW)

    rows = {r.agent_id: r for r in StatsSample.objects.all()}
    assert set(rows) == {running.pk, warning.pk}
    assert (report.ran, report.agents, report.stored, report.failed) == (True, 2, 2, 0)
    row = rows[running.pk]
    assert row.recorded_at == NOW
    assert (row.cpu_percent, row.memory_usage_mb, row.memory_limit_mb, row.pids) == (12.5, 100.0, 512.0, 7)
    assert row.memory_percent == pytest.approx(19.53125)
    assert (row.network_rx_mb, row.network_tx_mb, row.disk_read_mb, row.disk_write_mb) == (
        float(running.gateway_host_port), 2.0, 3.0, 4.0
    )


@pytest.mark.django_db
def test_one_failing_backend_does_not_keep_the_other_agents_rows_out():
    healthy = [AgentFactory(execution_target_id="docker") for _ in range(5)]
    AgentFactory(execution_target_id="remote:down")
    AgentFactory(execution_target_id="remote:down")

    def source(agent):
        if agent.execution_target_id == "remote:down":
            raise BackendUnreachable("no route to host")
        return snapshot_of(agent)

    report = stats_sample_tick(source=source, now=NOW)

    assert set(StatsSample.objects.values_list("agent_id", flat=True)) == {a.pk for a in healthy}
    assert report.stored == 5
    assert report.failed + report.skipped == 2


@pytest.mark.django_db
def test_the_real_backends_store_a_live_container_and_report_an_unregistered_target(docker_settings, docker_engine):
    live = AgentFactory(container_id="")
    spec = WorkloadSpec(str(live.pk), f"fleet-stats-tick-{live.pk.hex[:8]}", "openclaw",
                        docker_settings.AGENT_IMAGE_OPENCLAW, {}, {}, 0.5, 128, 1)
    live.container_id = DockerBackend().create(live, spec).container_id
    live.save(update_fields=["container_id"])
    AgentFactory(execution_target_id="remote:unregistered-host")

    report = stats_sample_tick(now=NOW)

    row = StatsSample.objects.get()
    assert row.agent_id == live.pk
    assert row.memory_limit_mb == 128.0
    assert row.pids >= 2
    assert (report.stored, report.failed) == (1, 1)


@pytest.mark.django_db
def test_a_tick_costs_the_same_queries_for_three_agents_or_thirty():
    def queries_for(count: int) -> int:
        StatsSample.objects.all().delete()
        Agent.objects.all().delete()
        AgentFactory.create_batch(count)
        with CaptureQueriesContext(connection) as captured:
            report = stats_sample_tick(source=snapshot_of, now=NOW)
        assert report.stored == count
        return len(captured)

    assert queries_for(3) == queries_for(30)


@pytest.mark.django_db
def test_a_tick_that_finds_the_previous_one_running_is_skipped_and_counted(caplog):
    AgentFactory()

    with coordination.held(TICK_LOCK) as acquired:
        assert acquired
        first = stats_sample_tick(source=snapshot_of, now=NOW)
        second = stats_sample_tick(source=snapshot_of, now=NOW)

    assert first.ran is second.ran is False
    skipped = [r.getMessage() for r in caplog.records if "tick skipped" in r.getMessage()]
    assert skipped == ["stats sampler tick skipped: the previous one is still running (1 so far)",
                       "stats sampler tick skipped: the previous one is still running (2 so far)"]
    assert not StatsSample.objects.exists()
    assert stats_sample_tick(source=snapshot_of, now=NOW).stored == 1  # the lock was released


@pytest.mark.django_db(transaction=True)
def test_two_ticks_never_overlap_even_from_two_threads():
    AgentFactory.create_batch(3)
    inside, release = threading.Event(), threading.Event()

    def slow_source(agent):
        inside.set()
        release.wait(10)
        return snapshot_of(agent)

    first = in_thread(lambda: stats_sample_tick(source=slow_source, now=NOW))
    try:
        assert inside.wait(10)
        second = stats_sample_tick(source=snapshot_of, now=NOW)
    finally:
        release.set()

    assert second.ran is False
    assert first.result(timeout=10).stored == 3
    assert StatsSample.objects.count() == 3


@pytest.mark.django_db(transaction=True)
def test_an_agent_deleted_while_its_engine_is_asked_does_not_cost_the_other_rows():
    doomed = AgentFactory()
    others = AgentFactory.create_batch(3)

    def source(agent):
        if agent.pk == doomed.pk:
            Agent.objects.filter(pk=doomed.pk).delete()
        return snapshot_of(agent)

    report = stats_sample_tick(source=source, now=NOW, limits=Limits(max_workers=1, per_lane=1))

    assert set(StatsSample.objects.values_list("agent_id", flat=True)) == {a.pk for a in others}
    assert report.stored == 3


# -- each engine's backend, read on the event loop where it can be ------------------------------


class LoopReadBackend:
    """A backend whose engine is read on the event loop (WorkloadStatsReader)."""

    def __init__(self, reads: list):
        self.reads = reads

    def stats(self, agent):
        raise AssertionError("an engine read on the event loop is never read in a thread")

    def stats_reader(self, *, connections: int):
        reads = self.reads

        @asynccontextmanager
        async def reader():
            async def read(agent):
                reads.append(agent.pk)
                return snapshot_of(agent)

            yield read

        return reader()


class ThreadReadBackend:
    """A backend read with its blocking stats() (Kubernetes, Proxmox, Remote Docker over SSH)."""

    def __init__(self, reads: list):
        self.reads = reads

    def stats(self, agent):
        self.reads.append(agent.pk)
        return snapshot_of(agent)


@pytest.mark.django_db
def test_each_engines_backend_is_resolved_once_a_tick_and_read_its_own_way(monkeypatch):
    from agents.backends import registry

    on_loop, in_threads, resolved = [], [], []

    def factory(execution_target_id):
        resolved.append(execution_target_id)
        return LoopReadBackend(on_loop) if execution_target_id == "remote:loop" else ThreadReadBackend(in_threads)

    monkeypatch.setitem(registry.TARGETS, "remote", replace(registry.TARGETS["remote"], factory=factory))
    loop_agents = [AgentFactory(execution_target_id="remote:loop") for _ in range(6)]
    thread_agents = [AgentFactory(execution_target_id="remote:threads") for _ in range(4)]

    report = stats_sample_tick(now=NOW)

    assert sorted(resolved) == ["remote:loop", "remote:threads"]  # not once per agent
    assert set(on_loop) == {a.pk for a in loop_agents}
    assert set(in_threads) == {a.pk for a in thread_agents}
    assert report.stored == 10
    assert StatsSample.objects.count() == 10


@pytest.mark.django_db
def test_agents_of_a_target_no_backend_serves_fail_and_the_others_are_stored(monkeypatch):
    from agents.backends import registry

    monkeypatch.setitem(registry.TARGETS, "remote",
                        replace(registry.TARGETS["remote"], factory=lambda target: ThreadReadBackend([])))
    served = AgentFactory(execution_target_id="remote:up")
    AgentFactory(execution_target_id="k8s:gone")  # no cluster registered: no backend

    report = stats_sample_tick(now=NOW)

    assert list(StatsSample.objects.values_list("agent_id", flat=True)) == [served.pk]
    assert (report.stored, report.failed) == (1, 1)


@pytest.mark.django_db
def test_a_tick_with_a_hung_engine_ends_within_its_budget_so_the_next_tick_runs(monkeypatch):
    from agents.backends import registry

    class HungBackend(LoopReadBackend):
        def stats_reader(self, *, connections):
            @asynccontextmanager
            async def reader():
                async def read(agent):
                    await asyncio.sleep(60)

                yield read

            return reader()

    monkeypatch.setitem(registry.TARGETS, "remote",
                        replace(registry.TARGETS["remote"], factory=lambda target: HungBackend([])))
    for _ in range(5):
        AgentFactory(execution_target_id="remote:hung")
    limits = Limits(per_lane_async=2, call_timeout=5, budget=0.5)

    started = time.monotonic()
    first = stats_sample_tick(now=NOW, limits=limits)
    second = stats_sample_tick(now=NOW, limits=limits)

    assert time.monotonic() - started < 3
    assert first.ran and second.ran  # the lock was let go: no tick dropped behind a hung engine
    assert (first.timed_out, first.skipped) == (2, 3)
