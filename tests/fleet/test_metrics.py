import pytest
from prometheus_client import REGISTRY

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


def test_metrics_serves_the_prometheus_text_format(client, settings):
    settings.METRICS_PUBLIC = True
    client.get("/api/health")

    response = client.get("/metrics")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    text = response.content.decode()
    assert "# TYPE fleet_http_requests_total counter" in text
    assert 'route="api/health"' in text


def test_a_metrics_token_is_required_when_configured(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"

    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 200


def test_metrics_answers_only_get(client, settings):
    settings.METRICS_PUBLIC = True
    assert client.post("/metrics").status_code == 405
