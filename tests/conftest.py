"""Shared fixtures: the tenancy, API clients, the clock, and settings every test runs with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client
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


# What a test needs to run alone with the Docker engine, the runtimes and sshd: under pytest-xdist
# (`make test` runs two workers, --dist loadgroup) all of these run on one worker, in order, so
# module runtimes, ports and engine-wide checks are never shared with another test process,
# while the other worker runs the tests that need only PostgreSQL and Redis.
ENGINE_MARKERS = ("docker", "runtime", "sshd", "browser")
ENGINE_FIXTURES = ("docker_engine", "docker_engine_url", "docker_settings", "openclaw_runtime", "hermes_runtime")
ENGINE_GROUP = "engine"


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups from the markers
def pytest_collection_modifyitems(config, items):
    for item in items:
        needs_engine = (any(item.get_closest_marker(name) for name in ENGINE_MARKERS)
                        or any(name in ENGINE_FIXTURES for name in getattr(item, "fixturenames", ())))
        if needs_engine:
            item.add_marker(pytest.mark.xdist_group(ENGINE_GROUP))


@pytest.hookimpl(trylast=True)  # after xdist named the groups
def pytest_collection_finish(session):
    """Under --dist loadgroup, xdist must have put the engine's tests in their group (it names the
    group in the node id); if a pytest or xdist upgrade stops that, they would run on two workers
    at once, sharing the engine, and fail in ways far from the cause: say so now."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    stray = [item.nodeid for item in session.items
             if item.get_closest_marker("xdist_group") and not item.nodeid.endswith("@" + ENGINE_GROUP)]
    if stray:
        raise pytest.UsageError(f"pytest-xdist did not group {len(stray)} engine tests (e.g. {stray[0]}): "
                                "this pytest and pytest-xdist no longer agree on --dist loadgroup.")


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
def console(platform_admin) -> Client:
    """The admin console (Django's test client) signed in as a platform admin."""
    client = Client()
    client.force_login(platform_admin)
    return client


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
