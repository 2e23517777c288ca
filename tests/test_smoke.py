"""The project as a whole: it configures, migrates, serves, and refuses unsafe production."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from tests.support import make_run_processes

ROOT = Path(__file__).resolve().parent.parent


def test_unknown_api_route_answers_json_404(client):
    response = client.get("/api/no-such-route")
    assert response.status_code == 404
    assert response.json() == {"error": "Not found.", "code": "not_found"}


@pytest.mark.django_db
def test_the_admin_login_page_serves(client):
    response = client.get("/admin/login/")
    assert response.status_code == 200
    assert b"Fleet" in response.content


def test_djangos_system_checks_pass(settings):
    settings.FLEET_INTERNAL_URL = "http://fleet.internal:8000"  # else agents.W001: bridged agents cannot report
    call_command("check", fail_level="WARNING")


@pytest.mark.django_db
def test_every_model_change_has_a_migration():
    call_command("makemigrations", check=True, dry_run=True, verbosity=0)


def _settings_import(**env_overrides) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "FLEET_ENCRYPTION_KEYS", "FLEET_TESTING")}
    env.update(env_overrides, DJANGO_SETTINGS_MODULE="fleet.settings")
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )


def test_production_refuses_to_start_without_a_secret_key():
    result = _settings_import(DEBUG="false", FLEET_ENCRYPTION_KEYS="k1:" + "A" * 43 + "=")
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_production_refuses_to_start_without_encryption_keys():
    result = _settings_import(DEBUG="false", SECRET_KEY="s" * 50)
    assert result.returncode != 0
    assert "FLEET_ENCRYPTION_KEYS must be set" in result.stderr


def test_production_starts_with_both_secrets_set():
    result = _settings_import(
        DEBUG="false", SECRET_KEY="s" * 50, FLEET_ENCRYPTION_KEYS="k1:" + "A" * 43 + "="
    )
    assert result.returncode == 0, result.stderr


def _procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())


def test_the_procfile_declares_release_web_a_worker_per_queue_beat_and_the_gateway_listener():
    processes = _procfile()
    assert set(processes) == {"release", "web", "worker", "provision", "periodic", "delivery", "beat", "gateway"}
    assert processes["gateway"] == "exec python manage.py gateway_listener"
    # Each long-running process replaces its shell, so a stop signal reaches it and its exit
    # code is its own (honcho reports rc=0 for a clean stop, not the shell's death by SIGTERM).
    long_running = ("web", "worker", "provision", "periodic", "delivery", "beat", "gateway")
    assert all(processes[name].startswith("exec ") for name in long_running)
    # Each queue has its worker, and each worker serves its queue alone (docs/configuration.md).
    for name, queues in {"worker": "runtime,celery", "provision": "provision", "periodic": "periodic",
                         "delivery": "delivery"}.items():
        assert f" -Q {queues} " in processes[name], processes[name]
    served = {queue for line in processes.values() for found in re.findall(r" -Q (\S+) ", line)
              for queue in found.split(",")}
    assert served >= set(settings.FLEET_QUEUES)
    assert set(make_run_processes()) == set(long_running)  # make run starts every one
    assert "migrate" in processes["release"]
    assert "setup_periodic_tasks" in processes["release"]
    assert "DatabaseScheduler" in processes["beat"]


def test_every_option_of_the_procfile_web_process_is_known_to_the_installed_granian():
    from fleet.web import DEFAULTS

    web = _procfile()["web"]
    assert "python -m fleet.web" in web  # granian, with fleet/web.py's defaults
    known = subprocess.run(
        [sys.executable, "-m", "granian", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    for option in {*re.findall(r"(--[a-z0-9-]+)", web), *(o for o in DEFAULTS if o.startswith("--"))}:
        assert re.search(rf"{option}\b", known), f"granian does not know {option}"


def test_every_variable_settings_reads_is_documented_in_configuration_md():
    source = (ROOT / "fleet" / "settings.py").read_text()
    read = set(re.findall(r'env\.\w+\(\s*"([A-Z][A-Z0-9_]*)"', source))
    read |= set(re.findall(r'os\.environ\.get\(\s*"([A-Z][A-Z0-9_]*)"', source))
    docs = (ROOT / "docs" / "configuration.md").read_text()
    documented = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", docs, flags=re.MULTILINE))

    assert len(read) > 40  # the pattern still finds the settings
    assert sorted(read - documented) == []
