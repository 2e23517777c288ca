"""Shared fixtures: the tenancy, API clients, the clock, and settings every test runs with."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client, override_settings
from rest_framework.test import APIClient

from tests.factories.accounts import AdminFactory, UserFactory
from tests.support import Clock, Tenancy, client_for, free_loopback_port, frozen_clock

# Real-service fixtures: http_receiver, smtp_server, celery_worker_live, docker_engine, docker_settings,
# fake_model (an OpenAI-compatible model on loopback), openclaw_runtime and hermes_runtime (the last three
# in tests.infra.runtimes).
pytest_plugins = ["tests.infra.http", "tests.infra.smtp", "tests.infra.celery", "tests.infra.docker",
                  "tests.infra.runtimes", "tests.infra.kube", "tests.infra.s3", "tests.infra.migrations",
                  # Watches logs and responses for secrets all session; tests/security/test_secrets_scan.py
                  # runs last and fails the run on a finding.
                  "tests.security.secrets_scan"]


# What a test needs of the machine's engine and its slow parts. Under pytest-xdist (`make test`
# runs TEST_WORKERS workers, --dist loadgroup) such tests run in groups, each on one worker, in order:
# the ENGINE_GROUPS hold every module that starts a real runtime, a browser or sshd, dealt
# alternately in the order they run (two workers each hold at most two OpenClaw at a time: the
# current module's and the next one's, started ahead), DOCKER_GROUP the modules that need only the
# Docker engine and the small test image. The groups share the engine but nothing else: each
# worker has its own database, Redis db and host port range (tests/settings.py) and its
# containers carry its own session label (tests/infra/docker.py).
# FAULTS_GROUP (below) holds the fault tests that start no runtime. Tests that need only
# PostgreSQL and Redis are spread over every worker.
HEAVY_MARKERS = ("runtime", "sshd", "browser")
HEAVY_FIXTURES = ("openclaw_runtime", "hermes_runtime")
ENGINE_MARKERS = ("docker", *HEAVY_MARKERS)
ENGINE_FIXTURES = ("docker_engine", "docker_engine_url", "docker_settings", *HEAVY_FIXTURES)
ENGINE_GROUPS = ("engine", "engine2")
DOCKER_GROUP = "docker"
# The fault tests (tests/faults) that start no runtime: private services and the Procfile's
# processes, mostly waiting on them; a group of their own, so with a third test worker they wait
# beside the other two groups instead of behind one of them.
FAULTS_GROUP = "faults"
FAULTS_PACKAGE = "tests.faults."
GROUPS = (*ENGINE_GROUPS, DOCKER_GROUP, FAULTS_GROUP)


def _needs(item, markers, fixtures) -> bool:
    return (any(item.get_closest_marker(name) for name in markers)
            or any(name in fixtures for name in getattr(item, "fixturenames", ())))


@pytest.hookimpl(tryfirst=True)  # before xdist names the groups from the markers
def pytest_collection_modifyitems(config, items):
    heavy_modules = list(dict.fromkeys(item.module.__name__ for item in items
                                       if _needs(item, HEAVY_MARKERS, HEAVY_FIXTURES)))
    engine_group_of = {module: ENGINE_GROUPS[index % len(ENGINE_GROUPS)] for index, module in enumerate(heavy_modules)}
    for item in items:
        module = item.module.__name__
        if _needs(item, ENGINE_MARKERS, ENGINE_FIXTURES) and module in engine_group_of:
            item.add_marker(pytest.mark.xdist_group(engine_group_of[module]))
        elif module.startswith(FAULTS_PACKAGE):
            item.add_marker(pytest.mark.xdist_group(FAULTS_GROUP))
        elif _needs(item, ENGINE_MARKERS, ENGINE_FIXTURES):
            item.add_marker(pytest.mark.xdist_group(DOCKER_GROUP))


@pytest.hookimpl(trylast=True)  # after xdist named the groups
def pytest_collection_finish(session):
    """Under --dist loadgroup, xdist must have put the engine's tests in their groups (it names
    the group in the node id); if a pytest or xdist upgrade stops that, they would run on two
    workers at once, sharing the engine, and fail in ways far from the cause: say so now."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    stray = [item.nodeid for item in session.items
             if item.get_closest_marker("xdist_group") and not item.nodeid.endswith(tuple(f"@{g}" for g in GROUPS))]
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
def cache_down():
    """The cache (rate limits, locks) pointed at a loopback port nothing listens on: Redis down."""
    caches = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": f"redis://127.0.0.1:{free_loopback_port()}/0"}}
    with override_settings(CACHES=caches):
        yield


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
def agent(tenancy):
    """An agent of the tenancy's agent owner, in its workspace (a module needing another one
    defines its own `agent`)."""
    return tenancy.agent()


@pytest.fixture
def clock() -> Iterator[Clock]:
    """The clock stopped at the test's start; move it with clock.move_to() or clock.advance()."""
    with frozen_clock() as clock:
        yield clock
