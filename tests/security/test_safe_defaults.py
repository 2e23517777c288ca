"""Defects 12 and 17: production-safe defaults (DEBUG off, /metrics closed, the web process on
loopback unless told), `make run` turning on development; a warning when requests come through
a proxy while NUM_PROXIES is 0."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"SECRET_KEY": "s" * 50, "FLEET_ENCRYPTION_KEYS": "k1:" + "A" * 43 + "="}


def settings_value(name: str, **env_overrides) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "FLEET_TESTING", "METRICS_PUBLIC")}
    env.update(env_overrides, DJANGO_SETTINGS_MODULE="fleet.settings")
    result = subprocess.run(
        [sys.executable, "-c", f"from django.conf import settings; print(settings.{name})"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_debug_is_off_unless_asked_for():
    assert settings_value("DEBUG", **SECRETS) == "False"
    assert settings_value("DEBUG", DEBUG="true") == "True"


def test_metrics_are_closed_by_default_and_open_under_debug():
    assert settings_value("METRICS_PUBLIC", **SECRETS) == "False"
    assert settings_value("METRICS_PUBLIC", DEBUG="true") == "True"


@pytest.mark.django_db
def test_metrics_without_a_token_is_not_found_by_default(settings):
    settings.METRICS_PUBLIC, settings.METRICS_TOKEN = False, ""

    assert Client().get("/metrics").status_code == 404


def test_the_procfile_binds_loopback_unless_told_otherwise(monkeypatch):
    import importlib

    from fleet import gunicorn_conf

    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "0.0.0.0" not in web
    assert "--host ${BIND_ADDRESS:-127.0.0.1} " in web  # fleet.web (granian): the host apart from the port
    # gunicorn, the other server that runs the same application, binds the same way.
    for name in ("BIND_ADDRESS", "FLEET_PORT", "PORT"):
        monkeypatch.delenv(name, raising=False)
    assert importlib.reload(gunicorn_conf).bind == ["127.0.0.1:8000"]
    monkeypatch.setenv("BIND_ADDRESS", "127.0.0.1, 172.17.0.1")
    monkeypatch.setenv("PORT", "9100")  # honcho's port for a later process; FLEET_PORT wins
    monkeypatch.setenv("FLEET_PORT", "9000")
    assert importlib.reload(gunicorn_conf).bind == ["127.0.0.1:9000", "172.17.0.1:9000"]
    monkeypatch.undo()
    importlib.reload(gunicorn_conf)


def test_make_run_turns_debug_on():
    makefile = (ROOT / "Makefile").read_text()
    run = makefile[makefile.index("\nrun:"):].split("\n\n")[0]

    assert "DEBUG=$${DEBUG:-true}" in run


@pytest.mark.django_db
def test_a_forwarded_request_with_no_proxies_configured_is_warned_about_once(caplog):
    from fleet.api.middleware import ProxyHeaderWarningMiddleware

    middleware = ProxyHeaderWarningMiddleware(lambda request: None)
    with caplog.at_level(logging.WARNING, logger="fleet.proxy"):
        for _ in range(3):
            middleware(type("R", (), {"META": {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}})())

    assert [r.message for r in caplog.records].count(caplog.records[0].message) == 1
    assert "NUM_PROXIES" in caplog.records[0].message


@pytest.mark.django_db
def test_no_warning_when_num_proxies_is_set(caplog, settings):
    from fleet.api.middleware import ProxyHeaderWarningMiddleware

    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "NUM_PROXIES": 1}
    middleware = ProxyHeaderWarningMiddleware(lambda request: None)
    with caplog.at_level(logging.WARNING, logger="fleet.proxy"):
        middleware(type("R", (), {"META": {"HTTP_X_FORWARDED_FOR": "203.0.113.9"}})())

    assert not caplog.records


@pytest.mark.django_db
def test_the_warning_fires_on_a_real_request(client, caplog):
    with caplog.at_level(logging.WARNING, logger="fleet.proxy"):
        client.get("/api/health", HTTP_X_FORWARDED_FOR="203.0.113.9")

    assert any("NUM_PROXIES" in r.message for r in caplog.records)
