"""GET /api/agents/:id/stats/history: windows, raw records, buckets, validation, access."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlencode

import pytest
from django.utils import timezone

from agents.stats.history import MAX_RECORDS
from tests.factories.agents import AgentFactory, make_samples

pytestmark = pytest.mark.django_db

RECORD_KEYS = {
    "recorded_at",
    "cpu_percent",
    "memory_usage_mb",
    "memory_limit_mb",
    "memory_percent",
    "network_rx_mb",
    "network_tx_mb",
    "disk_read_mb",
    "disk_write_mb",
    "pids",
}
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def url(agent, **params) -> str:
    query = f"?{urlencode(params)}" if params else ""
    return f"/api/agents/{agent.pk}/stats/history{query}"


def iso(value: datetime) -> str:
    return value.isoformat().replace("+00:00", "Z")


def times(body) -> list[datetime]:
    return [datetime.fromisoformat(r["recorded_at"]) for r in body]


def test_it_returns_every_sample_of_a_short_window_oldest_first_with_the_spec_fields(tenancy, agent):
    now = timezone.now()
    make_samples(agent, start=now - timedelta(seconds=295), count=30)
    make_samples(agent, start=now - timedelta(minutes=20), count=1)  # outside 15m
    make_samples(AgentFactory(), start=now - timedelta(seconds=295), count=30)  # another agent

    response = tenancy.client("owner").get(url(agent))

    assert response.status_code == 200
    body = response.json()
    assert len(body) == 30
    assert all(set(record) == RECORD_KEYS for record in body)
    assert times(body) == sorted(times(body))
    assert [r["cpu_percent"] for r in body] == [float(i) for i in range(30)]
    assert body[7] == {
        "recorded_at": body[7]["recorded_at"],
        "cpu_percent": 7.0,
        "memory_usage_mb": 100.0,
        "memory_limit_mb": 512.0,
        "memory_percent": pytest.approx(19.53125),
        "network_rx_mb": 70.0,
        "network_tx_mb": 35.0,
        "disk_read_mb": 14.0,
        "disk_write_mb": 7.0,
        "pids": 7,
    }


def test_an_agent_without_samples_has_an_empty_history(tenancy, agent):
    response = tenancy.client("owner").get(url(agent))

    assert response.status_code == 200
    assert response.json() == []


def test_the_default_range_is_fifteen_minutes(tenancy, agent):
    now = timezone.now()
    make_samples(agent, start=now - timedelta(minutes=16), count=1, cpu_percent=16.0)
    make_samples(agent, start=now - timedelta(minutes=14), count=1, cpu_percent=14.0)

    body = tenancy.client("owner").get(url(agent)).json()

    assert [r["cpu_percent"] for r in body] == [14.0]


@pytest.mark.parametrize(
    "name, length",
    [
        ("5m", timedelta(minutes=5)),
        ("15m", timedelta(minutes=15)),
        ("30m", timedelta(minutes=30)),
        ("1h", timedelta(hours=1)),
        ("6h", timedelta(hours=6)),
        ("24h", timedelta(hours=24)),
    ],
)
def test_each_range_reaches_back_exactly_its_length(tenancy, agent, name, length):
    now = timezone.now()
    make_samples(agent, start=now - length - timedelta(seconds=30), count=1, cpu_percent=1.0)
    make_samples(agent, start=now - length + timedelta(seconds=30), count=1, cpu_percent=2.0)

    body = tenancy.client("owner").get(url(agent, range=name)).json()

    assert [r["cpu_percent"] for r in body] == [2.0]


def test_from_and_to_select_a_window_that_includes_both_ends(tenancy, agent):
    make_samples(agent, start=T0, count=10)

    body = tenancy.client("owner").get(
        url(agent, **{"from": iso(T0 + timedelta(seconds=10)), "to": iso(T0 + timedelta(seconds=30))})
    ).json()

    assert times(body) == [T0 + timedelta(seconds=s) for s in (10, 20, 30)]


def test_range_is_ignored_when_from_and_to_are_given(tenancy, agent):
    make_samples(agent, start=T0, count=3)

    response = tenancy.client("owner").get(
        url(agent, range="bogus", **{"from": iso(T0), "to": iso(T0 + timedelta(minutes=1))})
    )

    assert response.status_code == 200
    assert len(response.json()) == 3


def test_timestamps_with_an_offset_are_understood_even_when_the_plus_sign_arrives_as_a_space(tenancy, agent):
    make_samples(agent, start=T0, count=10)
    # 14:00:20+02:00 is 12:00:20 UTC; the raw '+' of an unencoded query decodes to a space.
    path = f"/api/agents/{agent.pk}/stats/history?from=2026-03-01T14:00:20+02:00&to=2026-03-01T12:00:40Z"

    body = tenancy.client("owner").get(path).json()

    assert times(body) == [T0 + timedelta(seconds=s) for s in (20, 30, 40)]


def test_exactly_two_thousand_samples_come_back_raw(tenancy, agent):
    make_samples(agent, start=T0, count=MAX_RECORDS, every=timedelta(seconds=1))

    body = tenancy.client("owner").get(
        url(agent, **{"from": iso(T0), "to": iso(T0 + timedelta(hours=1))})
    ).json()

    assert len(body) == MAX_RECORDS
    assert [r["pids"] for r in body] == list(range(MAX_RECORDS))


def test_a_window_holding_more_samples_comes_back_as_evenly_spaced_buckets(tenancy, agent):
    # 4001 samples one second apart over 4000 s: 2000 buckets of 2 s, two samples each (the
    # last bucket also takes the sample at the window's inclusive end).
    make_samples(agent, start=T0, count=4001, every=timedelta(seconds=1))

    body = tenancy.client("owner").get(
        url(agent, **{"from": iso(T0), "to": iso(T0 + timedelta(seconds=4000))})
    ).json()

    assert len(body) == MAX_RECORDS
    assert all(set(record) == RECORD_KEYS for record in body)
    assert times(body) == [T0 + timedelta(seconds=2 * k) for k in range(MAX_RECORDS)]
    # gauges are averaged, cumulative counters take the bucket's maximum
    assert [r["cpu_percent"] for r in body[:3]] == [0.5, 2.5, 4.5]
    assert [r["pids"] for r in body[:3]] == [0.5, 2.5, 4.5]
    assert [r["network_rx_mb"] for r in body[:3]] == [10.0, 30.0, 50.0]
    assert [r["disk_write_mb"] for r in body[:3]] == [1.0, 3.0, 5.0]
    assert body[-1]["cpu_percent"] == 3999.0  # (3998 + 3999 + 4000) / 3
    assert body[-1]["network_rx_mb"] == 40000.0


def test_a_full_day_of_ten_second_samples_is_cut_to_the_cap_oldest_first(tenancy, agent):
    now = timezone.now()
    make_samples(agent, start=now - timedelta(hours=24) + timedelta(seconds=5), count=8640)

    body = tenancy.client("owner").get(url(agent, range="24h")).json()

    assert len(body) == MAX_RECORDS
    stamps = times(body)
    steps = {round((b - a).total_seconds(), 3) for a, b in zip(stamps, stamps[1:], strict=False)}
    assert steps == {43.2}  # 24 h / 2000
    counters = [r["network_rx_mb"] for r in body]
    assert counters == sorted(counters)


def test_buckets_that_hold_no_sample_are_left_out(tenancy, agent):
    make_samples(agent, start=T0, count=1500, every=timedelta(seconds=1))
    make_samples(agent, start=T0 + timedelta(seconds=3000), count=1001, every=timedelta(seconds=1))

    body = tenancy.client("owner").get(
        url(agent, **{"from": iso(T0), "to": iso(T0 + timedelta(seconds=4000))})
    ).json()

    gap_start, gap_end = T0 + timedelta(seconds=1500), T0 + timedelta(seconds=3000)
    assert not [t for t in times(body) if gap_start <= t < gap_end]
    assert len(body) == 750 + 500  # two-second buckets where samples exist


@pytest.mark.parametrize(
    "params, field",
    [
        ({"range": "2h"}, "range"),
        ({"range": ""}, "range"),
        ({"range": "24H"}, "range"),
        ({"from": "2026-03-01T12:00:00Z"}, "to"),
        ({"to": "2026-03-01T12:00:00Z"}, "from"),
        ({"from": "2026-03-01T12:00:01Z", "to": "2026-03-01T12:00:00Z"}, "from"),
        ({"from": "yesterday", "to": "2026-03-01T12:00:00Z"}, "from"),
        ({"from": "2026-03-01T12:00:00Z", "to": "2026-13-01T12:00:00Z"}, "to"),
        ({"from": "", "to": ""}, "from"),
    ],
)
def test_invalid_parameters_are_a_400_that_names_the_field(tenancy, agent, params, field):
    response = tenancy.client("owner").get(url(agent, **params))

    assert response.status_code == 400
    body = response.json()
    assert body["code"] == "validation_error"
    assert field in body["fields"]
    assert body["error"]


@pytest.mark.parametrize(
    "caller, status",
    [
        ("owner", 200),
        ("viewer", 200),
        ("key:agents:read", 200),
        ("outsider", 404),
        ("other-key", 404),
        ("key:workspaces:read", 403),
        ("anonymous", 401),
    ],
)
def test_history_is_for_viewers_of_the_agent(tenancy, agent, caller, status):
    make_samples(agent, start=timezone.now() - timedelta(minutes=1), count=3)

    response = tenancy.client(caller).get(url(agent))

    assert response.status_code == status
    if status == 200:
        assert len(response.json()) == 3
    else:
        assert set(response.json()) == {"error", "code"}


def test_an_invisible_agent_is_a_404_even_with_invalid_parameters(tenancy, agent):
    response = tenancy.client("outsider").get(url(agent, range="2h"))

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


@pytest.mark.parametrize("agent_id", ["00000000-0000-0000-0000-000000000000", "not-a-uuid"])
def test_an_unknown_agent_is_a_404(tenancy, agent_id):
    response = tenancy.client("owner").get(f"/api/agents/{agent_id}/stats/history")

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"
