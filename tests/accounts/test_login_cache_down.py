"""/api/auth/login while the cache (Redis) is down: 503 cache_unavailable with the error body,
never a 500. The cache points at a closed loopback port (the `cache_down` fixture)."""

from __future__ import annotations

import pytest

from tests.factories.accounts import DEFAULT_PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_login_answers_503_with_the_error_body_while_the_cache_is_down(api_client, cache_down):
    UserFactory(email="me@example.com")

    response = api_client.post("/api/auth/login", {"email": "me@example.com", "password": DEFAULT_PASSWORD},
                               format="json")

    assert response.status_code == 503
    assert response.json()["code"] == "cache_unavailable"
    assert set(response.json()) == {"error", "code"}

