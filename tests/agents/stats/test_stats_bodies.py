"""The exact bodies of the stats routes, byte for byte; the snapshot from a real container."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest

from agents.stats.selectors import stats_history_list
from agents.stats.serializers import StatsRecordOut
from agents.stats.window import Window
from tests.bodies import assert_body
from tests.factories.agents import make_samples, place_on_engine

pytestmark = pytest.mark.django_db

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


SNAPSHOT_KEYS = ["cpu_percent", "memory_usage_mb", "memory_limit_mb", "memory_percent", "network_rx_mb",
                 "network_tx_mb", "disk_read_mb", "disk_write_mb", "pids", "uptime_seconds", "running"]


def test_the_snapshot_of_a_real_container(tenancy, docker_settings):
    agent = place_on_engine(tenancy.agent())

    response = tenancy.client("viewer").get(f"/api/agents/{agent.pk}/stats")

    assert response.status_code == 200
    body = orjson.loads(response.content)
    assert list(body) == SNAPSHOT_KEYS  # the spec's order, nothing else (no `extra`)
    assert response.content == orjson.dumps(body)  # written as read back: no spacing, floats as floats
    assert all(type(body[key]) is float for key in SNAPSHOT_KEYS if key not in ("pids", "running"))
    assert type(body["pids"]) is int and body["running"] is True
    assert body["memory_limit_mb"] == 128.0


def record(at: datetime, i, pids) -> dict:
    return {"recorded_at": at.isoformat(), "cpu_percent": float(i), "memory_usage_mb": 100.0,
            "memory_limit_mb": 512.0, "memory_percent": 19.53125, "network_rx_mb": 10.0 * i,
            "network_tx_mb": 5.0 * i, "disk_read_mb": 2.0 * i, "disk_write_mb": 1.0 * i, "pids": pids}


def history(tenancy, agent, start, end):
    query = f"from={start.isoformat().replace('+00:00', 'Z')}&to={end.isoformat().replace('+00:00', 'Z')}"
    return tenancy.client("viewer").get(f"/api/agents/{agent.pk}/stats/history?{query}")


def test_raw_history_records(tenancy, agent):
    make_samples(agent, start=T0 + timedelta(microseconds=250), count=2)

    response = history(tenancy, agent, T0, T0 + timedelta(minutes=1))

    assert_body(response, [record(T0 + timedelta(microseconds=250), 0, 0),
                           record(T0 + timedelta(seconds=10, microseconds=250), 1, 1)])


def test_bucketed_history_records(tenancy, agent):
    make_samples(agent, start=T0, count=4001, every=timedelta(seconds=1))

    body = history(tenancy, agent, T0, T0 + timedelta(seconds=4000)).content

    # two samples a bucket: gauges averaged (pids too, so a float), counters the maximum
    first = {**record(T0, 0.5, 0.5), "network_rx_mb": 10.0, "network_tx_mb": 5.0, "disk_read_mb": 2.0,
             "disk_write_mb": 1.0}
    assert body.startswith(b"[" + orjson.dumps(first) + b",")


@pytest.mark.parametrize("count", [2, 4001], ids=["raw", "bucketed"])
def test_history_records_are_what_their_documentation_says(tenancy, agent, count):
    # History is answered as read, not through StatsRecordOut (agents/stats/serializers.py).
    make_samples(agent, start=T0, count=count, every=timedelta(seconds=1))

    body = history(tenancy, agent, T0, T0 + timedelta(seconds=4000)).json()
    records = stats_history_list(agent=agent, window=Window(T0, T0 + timedelta(seconds=4000)))

    assert {tuple(record) for record in body} == {tuple(StatsRecordOut().fields)}
    assert orjson.dumps(StatsRecordOut(records, many=True).data) == orjson.dumps(records)
