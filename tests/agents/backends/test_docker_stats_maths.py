"""The stats maths of agents/backends/docker_stats.py on recorded payloads. stats_cgroup_v1.json was
recorded on this machine's cgroup v1 engine (CPU, network and block io raised by hand: host-mode
containers have no interfaces); stats_cgroup_v2.json has the shape a cgroup v2 engine sends."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agents.backends.docker_stats import docker_time_ns, parse_docker_time, snapshot_from_stats

PAYLOADS = Path(__file__).parent / "payloads"
MB = 1024 * 1024
NOW = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)


def payload(name: str) -> dict:
    return json.loads((PAYLOADS / name).read_text())


def test_cgroup_v1_cpu_is_the_usage_delta_over_the_system_delta_times_online_cpus():
    snapshot = snapshot_from_stats(payload("stats_cgroup_v1.json"), running=True, started_at=NOW, now=NOW)
    # 0.5 s of container CPU over 2 s of system CPU on 2 CPUs
    assert snapshot.cpu_percent == pytest.approx(50.0)


def test_cgroup_v1_memory_excludes_the_page_cache():
    stats = payload("stats_cgroup_v1.json")
    snapshot = snapshot_from_stats(stats, running=True, started_at=NOW, now=NOW)
    used = 43261952 - 8441856  # usage - cache
    assert snapshot.memory_usage_mb == pytest.approx(used / MB)
    assert snapshot.memory_limit_mb == pytest.approx(256.0)
    assert snapshot.memory_percent == pytest.approx(used / 268435456 * 100)


def test_cgroup_v1_network_is_summed_over_interfaces_and_disk_counts_only_reads_and_writes():
    snapshot = snapshot_from_stats(payload("stats_cgroup_v1.json"), running=True, started_at=NOW, now=NOW)
    assert (snapshot.network_rx_mb, snapshot.network_tx_mb) == (pytest.approx(2.0), pytest.approx(0.5))
    # Sync/Async/Total rows repeat the same bytes and must not be added again.
    assert (snapshot.disk_read_mb, snapshot.disk_write_mb) == (pytest.approx(3.0), pytest.approx(1.0))
    assert snapshot.pids == 4


def test_cgroup_v2_cpu_memory_disk_and_pids():
    snapshot = snapshot_from_stats(payload("stats_cgroup_v2.json"), running=True, started_at=NOW, now=NOW)
    assert snapshot.cpu_percent == pytest.approx(100.0)  # 1 s over 4 s of system time on 4 CPUs
    assert snapshot.memory_usage_mb == pytest.approx(80.0)  # 100 MB minus 20 MB inactive_file
    assert snapshot.memory_limit_mb == pytest.approx(512.0)
    assert snapshot.memory_percent == pytest.approx(15.625)
    assert (snapshot.disk_read_mb, snapshot.disk_write_mb) == (pytest.approx(5.0), pytest.approx(2.0))
    assert snapshot.pids == 7


def test_a_container_without_interfaces_reports_no_network_traffic():
    snapshot = snapshot_from_stats(payload("stats_cgroup_v2.json"), running=True, started_at=NOW, now=NOW)
    assert (snapshot.network_rx_mb, snapshot.network_tx_mb) == (0.0, 0.0)


def test_online_cpus_falls_back_to_the_per_cpu_list_of_old_engines():
    stats = payload("stats_cgroup_v1.json")
    del stats["cpu_stats"]["online_cpus"]
    snapshot = snapshot_from_stats(stats, running=True, started_at=NOW, now=NOW)
    assert snapshot.cpu_percent == pytest.approx(50.0)  # percpu_usage lists 2 CPUs


def test_the_first_sample_without_a_previous_one_reports_zero_cpu():
    stats = payload("stats_cgroup_v2.json")
    stats["precpu_stats"] = {"cpu_usage": {"total_usage": 0}, "throttling_data": {}}
    assert snapshot_from_stats(stats, running=True, started_at=NOW, now=NOW).cpu_percent == 0.0


def test_uptime_counts_from_the_last_start_and_is_zero_when_stopped():
    started = NOW - timedelta(seconds=90)
    stats = payload("stats_cgroup_v2.json")
    assert snapshot_from_stats(stats, running=True, started_at=started, now=NOW).uptime_seconds == 90.0
    assert snapshot_from_stats(stats, running=False, started_at=started, now=NOW).uptime_seconds == 0.0


def test_a_stopped_container_with_only_a_limit_reports_zeros():
    snapshot = snapshot_from_stats({"memory_stats": {"limit": 128 * MB}}, running=False, started_at=None, now=NOW)
    assert snapshot.memory_limit_mb == 128.0
    assert (
        snapshot.cpu_percent, snapshot.memory_usage_mb, snapshot.memory_percent, snapshot.pids
    ) == (0.0, 0.0, 0.0, 0)
    assert snapshot.running is False


def test_docker_timestamps_parse_with_nanoseconds_and_the_zero_time_is_none():
    parsed = parse_docker_time("2026-11-22T06:48:03.217434449Z")
    assert parsed == datetime(2026, 11, 22, 6, 48, 3, 217434, tzinfo=UTC)
    assert parse_docker_time("0001-01-01T00:00:00Z") is None
    assert parse_docker_time("") is None


def test_creation_times_order_by_value_not_by_text():
    # Docker trims trailing zeros, so ".2Z" is later than ".10Z" although it sorts first as text.
    assert docker_time_ns("2026-11-22T06:48:03.10Z") < docker_time_ns("2026-11-22T06:48:03.2Z")
    assert docker_time_ns("2026-11-22T06:48:03.000000001Z") - docker_time_ns("2026-11-22T06:48:03Z") == 1
