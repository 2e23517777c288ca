"""CPU % of one-shot stats reads, taken against the previous reading of the same container.

stats_one_shot_cgroup_v1_{first,second}.json were recorded on this machine's cgroup v1 engine,
one second apart, from a container busy-looping under a 0.5 CPU limit; the v2 pair has the
shape a cgroup v2 engine sends, ten seconds apart. One-shot payloads carry no precpu_stats.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest

from agents.backends.docker_stats import (
    CpuSample,
    CpuSampleCache,
    cpu_percent_between,
    cpu_sample,
    snapshot_from_stats,
    window_seconds,
)
from tests.support import run_in_threads

PAYLOADS = Path(__file__).parent / "payloads"
NOW = datetime(2026, 11, 22, 7, 0, tzinfo=UTC)
SECOND = 1_000_000_000


def payload(name: str) -> dict:
    return json.loads((PAYLOADS / name).read_text())


def pair(shape: str) -> tuple[dict, dict]:
    return payload(f"stats_one_shot_{shape}_first.json"), payload(f"stats_one_shot_{shape}_second.json")


def sample(container_s: float, system_s: float, *, cpus: int = 2, at: float = 0.0) -> CpuSample:
    return CpuSample(int(container_s * SECOND), int(system_s * SECOND), cpus, at)


def test_a_one_shot_payload_has_no_previous_sample_and_alone_reports_zero_cpu():
    first, _ = pair("cgroup_v1")
    assert cpu_sample(first, key="precpu_stats") is None
    assert snapshot_from_stats(first, running=True, started_at=NOW, now=NOW).cpu_percent == 0.0


def test_cgroup_v1_one_shot_pair_gives_the_busy_loop_its_half_cpu():
    first, second = pair("cgroup_v1")
    earlier, later = cpu_sample(first), cpu_sample(second)
    # 491,670,759 ns of container CPU over 1.98 s of system time on 2 CPUs
    assert cpu_percent_between(earlier, later) == pytest.approx(491_670_759 / 1_980_000_000 * 2 * 100)
    assert cpu_percent_between(earlier, later) == pytest.approx(49.66, abs=0.01)
    assert window_seconds(earlier, later) == pytest.approx(0.99)


def test_cgroup_v2_one_shot_pair_and_the_snapshot_built_from_the_later_payload():
    first, second = pair("cgroup_v2")
    cpu = cpu_percent_between(cpu_sample(first), cpu_sample(second))
    assert cpu == pytest.approx(60.0)  # 6 s of container CPU over 40 s of system time on 4 CPUs

    snapshot = snapshot_from_stats(second, running=True, started_at=NOW, now=NOW, cpu=cpu)
    assert snapshot.cpu_percent == pytest.approx(60.0)
    assert snapshot.memory_usage_mb == pytest.approx(80.0)  # the rest still comes from the payload
    assert snapshot.pids == 7


@pytest.mark.parametrize("shape", ["cgroup_v1", "cgroup_v2"])
def test_the_cache_answers_the_second_read_of_a_container_from_the_first(shape):
    first, second = pair(shape)
    cache = CpuSampleCache()
    earlier, later = cpu_sample(first, at=100.0), cpu_sample(second, at=101.0)

    assert cache.percent("c1", earlier) is None  # nothing kept yet: the caller reads again
    cache.record("c1", earlier, 0.0)
    assert cache.percent("c1", later) == pytest.approx(cpu_percent_between(earlier, later))
    assert cache.percent("c2", later) is None  # readings are per container


def test_each_read_is_measured_from_the_one_before_it():
    cache = CpuSampleCache()
    cache.record("c", sample(10, 1000, at=0), 0.0)
    assert cache.percent("c", sample(11, 1010, at=5)) == pytest.approx(20.0)  # 1 s over 10 s on 2 CPUs
    assert cache.percent("c", sample(11, 1020, at=10)) == pytest.approx(0.0)  # idle since the last read
    assert cache.percent("c", sample(16, 1030, at=15)) == pytest.approx(100.0)


def test_a_reading_older_than_the_age_limit_is_not_used():
    cache = CpuSampleCache(max_age=30.0)
    cache.record("c", sample(10, 1000, at=0), 0.0)
    assert cache.percent("c", sample(40, 1100, at=31)) is None


def test_a_restart_resets_the_counter_and_needs_a_fresh_pair():
    cache = CpuSampleCache()
    cache.record("c", sample(500, 1000, at=0), 40.0)
    assert cache.percent("c", sample(1, 1020, at=10)) is None


def test_a_change_of_cpu_count_needs_a_fresh_pair():
    cache = CpuSampleCache()
    cache.record("c", sample(10, 1000, cpus=2, at=0), 5.0)
    assert cache.percent("c", sample(11, 1020, cpus=4, at=10)) is None


def test_a_read_too_close_to_the_kept_one_repeats_its_figure_and_keeps_the_older_reading():
    cache = CpuSampleCache(min_window=0.25)
    cache.record("c", sample(10, 1000, at=0), 30.0)
    # 0.1 s later on 2 CPUs: 0.2 s of system time, too few /proc/stat ticks for a figure
    assert cache.percent("c", sample(10.2, 1000.2, at=0.1)) == 30.0
    # The next read is measured from the kept reading, not from the one repeated above.
    assert cache.percent("c", sample(11, 1002, at=1)) == pytest.approx(100.0)


def test_an_older_reading_arriving_late_does_not_replace_a_newer_one():
    cache = CpuSampleCache()
    cache.record("c", sample(20, 1020, at=10), 50.0)
    assert cache.percent("c", sample(15, 1010, at=11)) == 50.0  # read earlier, answered later
    assert cache.percent("c", sample(21, 1030, at=20)) == pytest.approx(20.0)  # from the newer one


def test_the_cache_keeps_at_most_max_entries_dropping_the_least_recently_read():
    cache = CpuSampleCache(max_entries=3)
    for key in ("a", "b", "c"):
        cache.record(key, sample(1, 1000, at=0), 0.0)
    assert cache.percent("a", sample(2, 1010, at=10)) == pytest.approx(20.0)  # "a" read again
    cache.record("d", sample(1, 1000, at=10), 0.0)

    assert len(cache) == 3
    assert cache.percent("b", sample(2, 1020, at=20)) is None  # the oldest read went
    assert cache.percent("a", sample(3, 1020, at=20)) == pytest.approx(20.0)


def test_threads_reading_many_containers_at_once_keep_the_cache_bounded_and_consistent():
    cache = CpuSampleCache(max_entries=50)
    wrong = []

    def reader(offset: int) -> None:
        for step in range(1, 200):
            key = f"c{(offset + step) % 80}"
            figure = cache.percent(key, sample(step, 1000 + 10 * step, at=step * 0.01))
            if figure is None:
                cache.record(key, sample(step, 1000 + 10 * step, at=step * 0.01), 0.0)
            elif figure != 0.0 and figure != pytest.approx(20.0):  # every delta here is 20 %
                wrong.append(figure)

    run_in_threads(*(partial(reader, n * 7) for n in range(8)))  # a reader's exception is raised here

    assert wrong == []
    assert len(cache) == 50
