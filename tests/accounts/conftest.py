"""Fixtures for the accounts tests: error-body checks and a real HTTP server for providers."""

from __future__ import annotations

import pytest

from tests.infra.http import Reply  # http_receiver comes from tests/conftest.py's plugins

__all__ = ["Reply", "assert_error"]


def assert_error(response, status: int, code: str | None = None) -> dict:
    """The response is `status` with the API's error body (and `code` when given)."""
    assert response.status_code == status, (response.status_code, response.content[:500])
    body = response.json()
    assert isinstance(body.get("error"), str) and body["error"]
    assert isinstance(body.get("code"), str) and body["code"]
    if code is not None:
        assert body["code"] == code, body
    return body


@pytest.fixture
def selfhosted(settings):
    settings.PLATFORM_MODE = "selfhosted"
    settings.SIGNUP_ENABLED = True
    settings.SIGNUP_BOT_PROTECTION_PROVIDER = "none"
    return settings


@pytest.fixture
def paas(settings):
    settings.PLATFORM_MODE = "paas"
    settings.SIGNUP_ENABLED = True
    return settings


