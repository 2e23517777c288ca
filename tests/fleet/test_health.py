import os
import time

import pytest
from django.db import connection

from fleet.health import _warnings, health_warning_register
from fleet.heartbeat import HEARTBEAT_STALE_SECONDS, heartbeat_record
from tests.support import need_service

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def agents_reach_fleet(settings):
    """A configuration without warnings (the bridged agents' one has its tests below)."""
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"


@pytest.fixture
def redis_configured(settings):
    need_service(bool(os.environ.get("REDIS_URL")), "the Redis check needs REDIS_URL")
    settings.REDIS_URL = os.environ["REDIS_URL"]


def test_it_answers_ok_when_database_redis_and_worker_are_fine(api_client, redis_configured):
    heartbeat_record()

    response = api_client.get("/api/health")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok", "worker": "ok", "engines": {"docker": "unknown"}, "scheduler": {}},
        "totals": {"engines": {}},
        "warnings": [],
    }


def test_a_worker_that_never_reported_degrades_the_status_but_keeps_200(api_client, redis_configured):
    response = api_client.get("/api/health")

    assert response.status_code == 200
    assert response.json() == {
        "status": "degraded",
        "checks": {"database": "ok", "redis": "ok", "worker": "missing", "engines": {"docker": "unknown"},
                   "scheduler": {}},
        "totals": {"engines": {}},
        "warnings": [],
    }


def test_a_stale_worker_heartbeat_degrades_the_status(api_client, redis_configured):
    heartbeat_record(at=time.time() - HEARTBEAT_STALE_SECONDS - 1)

    body = api_client.get("/api/health").json()

    assert body["status"] == "degraded" and body["checks"]["worker"] == "stale"


def test_redis_not_configured_counts_as_ok(api_client, settings):
    settings.REDIS_URL = ""
    heartbeat_record()

    response = api_client.get("/api/health")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "not_configured", "worker": "ok", "engines": {"docker": "unknown"},
                   "scheduler": {}},
        "totals": {"engines": {}},
        "warnings": [],
    }


def test_an_unreachable_redis_answers_503(api_client, settings):
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    heartbeat_record()

    response = api_client.get("/api/health")

    assert response.status_code == 503
    assert response.json()["status"] == "degraded"
    assert response.json()["checks"]["redis"] == "error"


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_database_answers_503(api_client, monkeypatch):
    if connection.vendor != "postgresql":
        pytest.skip("an in-memory SQLite test database cannot be made unreachable; CI runs this on PostgreSQL")
    heartbeat_record()
    connection.close()
    monkeypatch.setitem(connection.settings_dict, "PORT", "1")  # a real refused connection
    monkeypatch.setitem(connection.settings_dict, "HOST", "127.0.0.1")
    try:
        response = api_client.get("/api/health")
    finally:
        connection.close()

    assert response.status_code == 503
    assert response.json()["checks"]["database"] == "error"


def test_it_is_public_and_ignores_a_bad_credential(api_client):
    api_client.credentials(HTTP_AUTHORIZATION="Bearer not-a-token", HTTP_X_API_KEY="fk_nope")
    response = api_client.get("/api/health")
    assert response.status_code in (200, 503)
    assert set(response.json()) == {"status", "checks", "totals", "warnings"}


def test_other_methods_get_the_json_405_body(api_client):
    response = api_client.post("/api/health", {}, format="json")
    assert response.status_code == 405
    assert response.json()["code"] == "method_not_allowed"


# -- configuration warnings ---------------------------------------------------------------------


def test_bridged_agents_that_cannot_reach_fleet_are_a_warning_that_says_what_to_set(api_client, settings):
    settings.FLEET_INTERNAL_URL = ""
    settings.DOCKER_NETWORK_MODE = "bridge"
    settings.BIND_ADDRESS = "127.0.0.1"
    settings.FLEET_PORT = 8123
    heartbeat_record()

    body = api_client.get("/api/health").json()

    (warning,) = body["warnings"]
    assert "http://host.docker.internal:8123" in warning and "127.0.0.1 only" in warning
    assert "Set BIND_ADDRESS" in warning and "FLEET_INTERNAL_URL" in warning
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"
    without = api_client.get("/api/health").json()
    assert without["warnings"] == [] and without["status"] == body["status"]  # a warning is not a failure


def test_a_warning_that_fails_is_logged_and_left_out(api_client, caplog):
    health_warning_register("exploding", lambda: 1 / 0)
    try:
        with caplog.at_level("WARNING", logger="fleet.health"):
            body = api_client.get("/api/health").json()
    finally:
        _warnings.pop("exploding")

    assert body["warnings"] == []
    assert "the exploding warning could not be worked out" in caplog.text


def test_closing_the_checks_connections_leaves_no_socket_and_the_next_check_reconnects(api_client, redis_configured):
    from fleet import health

    assert api_client.get("/api/health").json()["checks"]["redis"] == "ok"
    client = health._redis_client(os.environ["REDIS_URL"])  # held: only a disconnect closes its socket
    pool = client.connection_pool
    connections = [*pool._available_connections]
    assert [c for c in connections if c._sock is not None]  # the check's connection, kept for the next one

    health.health_connections_close()

    assert not pool._in_use_connections and all(c._sock is None for c in connections)
    assert api_client.get("/api/health").json()["checks"]["redis"] == "ok"
