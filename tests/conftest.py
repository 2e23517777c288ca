"""Shared fixtures: the tenancy, API clients, the clock, and settings every test runs with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from rest_framework.test import APIClient

from tests.factories.accounts import AdminFactory, UserFactory
from tests.support import Clock, Tenancy, client_for, frozen_clock

# Real-service fixtures: http_receiver, smtp_server, celery_worker_live, docker_engine, docker_settings,
# fake_model (an OpenAI-compatible model on loopback), openclaw_runtime and hermes_runtime.
pytest_plugins = ["tests.infra.http", "tests.infra.smtp", "tests.infra.celery", "tests.infra.docker",
                  "tests.infra.fake_model", "tests.infra.runtimes", "tests.infra.kube",
                  # Watches logs and responses for secrets all session; tests/security/test_secrets_scan.py
                  # runs last and fails the run on a finding.
                  "tests.security.secrets_scan"]


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


@pytest.fixture
def user(db):
    return UserFactory()


@pytest.fixture
def platform_admin(db):
    return AdminFactory()


@pytest.fixture
def user_client(user) -> APIClient:
    return client_for(user)


@pytest.fixture
def tenancy(db) -> Tenancy:
    """A workspace with someone in every role, an outsider and a platform admin (tests.support.Tenancy)."""
    return Tenancy.create()


@pytest.fixture
def clock() -> Iterator[Clock]:
    """The clock stopped at the test's start; move it with clock.move_to() or clock.advance()."""
    with frozen_clock() as clock:
        yield clock
