import pytest
from prometheus_client import REGISTRY

from fleet.metrics import register_gauge, unregister_gauge

pytestmark = pytest.mark.django_db


def requests_count(route: str, status: str, method: str = "GET") -> float:
    labels = {"method": method, "route": route, "status": status}
    return REGISTRY.get_sample_value("fleet_http_requests_total", labels) or 0.0


def test_it_counts_requests_by_route_pattern_and_status(client):
    before_ok = requests_count("api/health", "200") + requests_count("api/health", "503")
    before_missing = requests_count("unmatched", "404")

    client.get("/api/health")
    client.get("/api/no-such-thing/123")

    assert requests_count("api/health", "200") + requests_count("api/health", "503") == before_ok + 1
    assert requests_count("unmatched", "404") == before_missing + 1


def test_it_times_requests_by_route(client):
    labels = {"method": "GET", "route": "api/health"}
    before = REGISTRY.get_sample_value("fleet_http_request_duration_seconds_count", labels) or 0.0
    client.get("/api/health")
    assert REGISTRY.get_sample_value("fleet_http_request_duration_seconds_count", labels) == before + 1


def test_unknown_methods_share_one_label(client):
    before = requests_count("api/health", "405", method="other")
    client.generic("BREW", "/api/health")
    assert requests_count("api/health", "405", method="other") == before + 1


def test_metrics_serves_the_prometheus_text_format(client):
    client.get("/api/health")

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert "# TYPE fleet_http_requests_total counter" in text
    assert 'route="api/health"' in text


@pytest.fixture
def gauges():
    names = []

    def add(name, *args, **kwargs):
        register_gauge(name, *args, **kwargs)
        names.append(name)

    yield add
    for name in names:
        unregister_gauge(name)


def test_apps_can_contribute_gauges_computed_at_scrape_time(client, gauges):
    counter = iter(range(1, 100))
    gauges("fleet_test_queue_depth", "Items waiting.", lambda: next(counter))
    gauges("fleet_test_agents", "Agents by status.", lambda: {("running",): 3, ("stopped",): 1}, labelnames=("status",))

    first = client.get("/metrics").content.decode()
    second = client.get("/metrics").content.decode()

    assert "fleet_test_queue_depth 1.0" in first and "fleet_test_queue_depth 2.0" in second
    assert 'fleet_test_agents{status="running"} 3.0' in first
    assert 'fleet_test_agents{status="stopped"} 1.0' in first


def test_a_failing_gauge_is_left_out_and_the_scrape_goes_on(client, gauges):
    gauges("fleet_test_broken", "Always fails.", lambda: 1 / 0)
    gauges("fleet_test_fine", "Always 7.", lambda: 7)

    response = client.get("/metrics")

    assert response.status_code == 200
    assert "fleet_test_broken" not in response.content.decode()
    assert "fleet_test_fine 7.0" in response.content.decode()


def test_register_gauge_refuses_invalid_names():
    with pytest.raises(ValueError):
        register_gauge("fleet agents", "bad", lambda: 1)
    with pytest.raises(ValueError):
        register_gauge("fleet_agents", "bad", lambda: 1, labelnames=("bad-label",))


def test_a_metrics_token_is_required_when_configured(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"

    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_metrics_answers_only_get(client):
    assert client.post("/metrics").status_code == 405
