"""Shared fixtures: API clients for each kind of credential, and service gates."""

from __future__ import annotations

import os

import pytest
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue
from tests.factories.accounts import AdminFactory, UserFactory

IN_CI = os.environ.get("CI", "").lower() == "true"

# Real-service fixtures: http_receiver, smtp_server, celery_worker_live, docker_engine, docker_settings,
# fake_model (an OpenAI-compatible model on loopback), openclaw_runtime and hermes_runtime.
pytest_plugins = ["tests.infra.http", "tests.infra.smtp", "tests.infra.celery", "tests.infra.docker",
                  "tests.infra.fake_model", "tests.infra.runtimes"]


def need_service(available: bool, reason: str) -> None:
    """Skip a test whose real service is missing; under CI=true, fail instead."""
    if available:
        return
    if IN_CI:
        pytest.fail(f"required service missing under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    # Factories set a password on every user and PBKDF2 costs most of a second per hash;
    # the tests that measure the real hasher set it back themselves.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _clear_cache():
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


def client_for(user=None, *, api_key: str | None = None, header: str = "X-Api-Key") -> APIClient:
    """An APIClient carrying a Bearer session for `user`, or an API key header."""
    client = APIClient()
    if user is not None:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=user)}")
    if api_key is not None:
        meta = "HTTP_" + header.upper().replace("-", "_")
        client.credentials(**{meta: api_key})
    return client


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def platform_admin(db):
    return AdminFactory()


@pytest.fixture
def user_client(user) -> APIClient:
    return client_for(user)
