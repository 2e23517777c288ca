"""The test suite's settings: production's defaults (DEBUG false), plus generated development
secrets (FLEET_TESTING, inherited by the processes tests start) and plain-HTTP cookies for the
test client. pyproject.toml names this module."""

import os

os.environ.setdefault("FLEET_TESTING", "true")

from fleet.settings import *  # noqa: E402, F403

SESSION_COOKIE_SECURE_API = SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = False
# Static files straight from the apps (no collectstatic before a test run) for the servers tests
# start (tests.infra.web_server: the browser tests' gunicorn serves the console's theme and
# scripts this way). Not in the test process itself: WhiteNoise walks every app's static files
# when a handler loads its middleware, about 30 ms for each test client.
WHITENOISE_USE_FINDERS = os.environ.get("FLEET_TEST_STATIC_FROM_APPS") == "true"
