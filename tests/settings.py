"""The test suite's settings: production's defaults (DEBUG false), plus generated development
secrets (FLEET_TESTING, inherited by the processes tests start) and plain-HTTP cookies for the
test client. pyproject.toml names this module."""

import os

os.environ.setdefault("FLEET_TESTING", "true")


def _redis_of_this_worker(url: str, worker: str) -> str:
    """REDIS_URL's database plus the pytest-xdist worker's number (gw1: one above), so workers
    share no cache, throttle or Celery queue. Set in the environment: the servers and Celery
    workers tests start, and tests reading REDIS_URL, get the same one."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) + int(worker.removeprefix("gw"))
    return urlunsplit(parts._replace(path=f"/{database}"))


_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
# Once: processes a worker starts inherit these variables and load these settings again.
if _worker and os.environ.get("FLEET_TEST_REDIS_WORKER") != _worker:
    if os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = _redis_of_this_worker(os.environ["REDIS_URL"], _worker)
    # A var folder of its own too: the user cache's stamp file (accounts.user_cache), the
    # embedded broker and the metrics folder are per installation, and workers are not one.
    from fleet.paths import var_dir

    os.environ["FLEET_VAR_DIR"] = str(var_dir() / f"test-{_worker}")
    os.environ["FLEET_TEST_REDIS_WORKER"] = _worker

from fleet.settings import *  # noqa: E402, F403

# Host ports of agents' gateways: a share of the range for each test worker, as their engine
# tests run at the same time on one engine (tests/conftest.py's groups). The top of the range is
# left to the tests that set their own (tests/agents/backends/test_docker_ports.py: 19986 to
# 19995), with a margin below: an agent placed at random by another test must never hold one of
# them, nor listen next to it (a runtime may open a port or two above its gateway's).
_FIXED_PORTS_FROM = 19980
_low, _high = DOCKER_HOST_PORT_RANGE[0], _FIXED_PORTS_FROM - 11  # noqa: F405
if _worker:
    _workers = max(1, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
    _share = (_high - _low + 1) // _workers
    _low += _share * (int(_worker.removeprefix("gw")) % _workers)
    _high = _low + _share - 1
DOCKER_HOST_PORT_RANGE = (_low, _high)

SESSION_COOKIE_SECURE_API = SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
# Static files straight from the apps (no collectstatic before a test run) for the servers tests
# start (tests.infra.web_server: the browser tests' gunicorn serves the console's theme and
# scripts this way). Not in the test process itself: WhiteNoise walks every app's static files
# when a handler loads its middleware, about 30 ms for each test client.
WHITENOISE_USE_FINDERS = os.environ.get("FLEET_TEST_STATIC_FROM_APPS") == "true"
