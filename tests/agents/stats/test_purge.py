"""stats_purge: samples older than 24 hours go, in bounded batches; newer ones stay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import StatsSample
from agents.stats.services import stats_purge
from tests.factories.agents import AgentFactory, make_samples

pytestmark = pytest.mark.django_db

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_samples_older_than_a_day_are_deleted_and_younger_ones_kept():
    agent, other = AgentFactory(), AgentFactory()
    make_samples(agent, start=NOW - timedelta(hours=25), count=30)  # 25 h to 24 h 55 min old
    make_samples(other, start=NOW - timedelta(hours=25), count=30)
    kept = make_samples(agent, start=NOW - timedelta(hours=24) + timedelta(seconds=1), count=10)

    deleted = stats_purge(now=NOW)

    assert deleted == 60
    assert sorted(StatsSample.objects.values_list("recorded_at", flat=True)) == [r.recorded_at for r in kept]


def test_a_sample_exactly_a_day_old_is_kept():
    make_samples(AgentFactory(), start=NOW - timedelta(hours=24), count=1)

    assert stats_purge(now=NOW) == 0
    assert StatsSample.objects.count() == 1


def test_the_purge_deletes_in_batches_of_the_given_size():
    make_samples(AgentFactory(), start=NOW - timedelta(days=2), count=23)

    with CaptureQueriesContext(connection) as captured:
        deleted = stats_purge(now=NOW, batch_rows=5)

    deletes = [q["sql"] for q in captured if q["sql"].startswith("DELETE")]
    assert deleted == 23
    assert len(deletes) == 5  # 5 + 5 + 5 + 5 + 3
    assert not StatsSample.objects.exists()


def test_a_batch_never_splits_a_tick():
    agents = AgentFactory.create_batch(3)
    for agent in agents:  # four old ticks of three rows each
        make_samples(agent, start=NOW - timedelta(days=2), count=4)

    deleted = stats_purge(now=NOW, batch_rows=4, max_batches=1)

    assert deleted == 6  # the 4th oldest row is in the second tick: both ticks go, whole
    remaining = StatsSample.objects.values_list("recorded_at", flat=True)
    assert sorted(remaining) == sorted([NOW - timedelta(days=2) + timedelta(seconds=s) for s in (20, 30)] * 3)


def test_one_run_stops_after_its_batch_allowance_and_the_next_run_carries_on():
    make_samples(AgentFactory(), start=NOW - timedelta(days=2), count=30)

    assert stats_purge(now=NOW, batch_rows=5, max_batches=2) == 10
    assert StatsSample.objects.count() == 20
    assert stats_purge(now=NOW, batch_rows=5, max_batches=10) == 20


def test_the_oldest_samples_go_first():
    make_samples(AgentFactory(), start=NOW - timedelta(days=2), count=10)

    stats_purge(now=NOW, batch_rows=4, max_batches=1)

    remaining = sorted(StatsSample.objects.values_list("recorded_at", flat=True))
    assert remaining[0] == NOW - timedelta(days=2) + timedelta(seconds=40)
