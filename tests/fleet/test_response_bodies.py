"""The exact body of GET /api/health, byte for byte (tests.bodies.assert_body)."""

from __future__ import annotations

import os

import pytest

from fleet.heartbeat import heartbeat_record
from tests.bodies import assert_body
from tests.support import need_service

pytestmark = pytest.mark.django_db


def test_health(api_client, settings):
    need_service(bool(os.environ.get("REDIS_URL")), "the Redis check needs REDIS_URL")
    settings.REDIS_URL = os.environ["REDIS_URL"]
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"  # no warning about bridged agents
    heartbeat_record()

    assert_body(api_client.get("/api/health"),
                {"status": "ok", "checks": {"database": "ok", "redis": "ok", "worker": "ok",
                                           "engines": {"docker": "unknown"}, "scheduler": {}},
                 "totals": {"engines": {}}, "warnings": []})
