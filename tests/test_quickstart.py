"""The README's quick start, step by step as written, on a fresh installation: `make run`'s
embedded defaults (SQLite, the filesystem broker, development secrets, all under a new var/),
its release step, its four processes, the first admin from `bootstrap_admin`, then over HTTP
sign-in, a workspace, an API key, an agent deployed with the real OpenClaw image onto the local
engine, running, its gateway URL, and a stop; Ctrl-C ends it all.

The one departure is the README's own: this engine has no bridge, so `DOCKER_NETWORK_MODE=host`
(its "Networking" bullet)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import requests

from tests.infra.runtimes import OPENCLAW_IMAGE, free_loopback_port
from tests.support import make_run_processes, need_service, wait_until

pytestmark = [pytest.mark.docker, pytest.mark.runtime, pytest.mark.timeout(360)]

ROOT = Path(__file__).resolve().parents[1]
EMAIL, PASSWORD = "you@example.com", "change-me-please"


def _manage(env: dict, *args: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _fresh_clone_env(tmp_path: Path, engine_url: str, port: int) -> dict:
    """What `make run` gives its processes, with nothing of the test run's own services."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "LOG_LEVEL", "BIND_ADDRESS",
                          "DJANGO_SETTINGS_MODULE", "FLEET_TESTING", "PYTEST_XDIST_WORKER")}
    return {
        **env,
        "PATH": f"{Path(sys.executable).parent}:{env['PATH']}",
        "FLEET_VAR_DIR": str(tmp_path / "var"),  # the fresh clone's var/
        "DEBUG": "true", "PORT": str(port), "FLEET_PORT": str(port), "DEFAULT_RAM_MB": "2048",
        "DOCKER_HOST": engine_url, "DOCKER_NETWORK_MODE": "host",
    }


def test_the_readme_quick_start_works_as_written(tmp_path, docker_engine, docker_engine_url):
    need_service(bool(docker_engine.images.list(name=OPENCLAW_IMAGE)),
                 f"step 1 (build the runtime images) has not been done on the test engine: {OPENCLAW_IMAGE}")
    port = free_loopback_port()
    env = _fresh_clone_env(tmp_path, docker_engine_url, port)
    _manage(env, "migrate", "--noinput")  # make run's release step (make migrate)
    _manage(env, "setup_periodic_tasks")

    log = tmp_path / "make-run.log"
    with open(log, "w") as out:  # step 2: make run
        processes = subprocess.Popen([sys.executable, "-m", "fleet.processes", "start", *make_run_processes()],
                                     cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    api = f"http://127.0.0.1:{port}/api"
    agent_id = None
    try:
        wait_until(lambda: _answers(f"{api}/health") or processes.poll() is not None, timeout=90, interval=0.5)
        assert processes.poll() is None, log.read_text()[-3000:]

        # Step 3: the first platform admin.
        assert "created" in _manage(env, "bootstrap_admin", "--email", EMAIL, "--password", PASSWORD).lower()

        # Step 4: sign in, a workspace, an API key.
        login = requests.post(f"{api}/auth/login", json={"email": EMAIL, "password": PASSWORD}, timeout=10)
        token = login.json()["token"]
        session = {"Authorization": f"Bearer {token}"}
        workspace = requests.post(f"{api}/workspaces", json={"name": "Ops"}, headers=session, timeout=10).json()["id"]
        key = requests.post(f"{api}/workspaces/{workspace}/api-keys", headers=session, timeout=10,
                            json={"name": "first key", "scopes": ["agents:read", "agents:write"]}).json()["key"]
        as_key = {"X-Api-Key": key}

        # Step 5: deploy an agent and wait for it.
        deployed = requests.post(f"{api}/agents/deploy", json={"name": "first-agent"}, headers=as_key, timeout=10)
        assert deployed.status_code == 201, deployed.text
        agent_id = deployed.json()["id"]
        assert deployed.json()["status"] in ("queued", "deploying")

        def status() -> dict:
            return requests.get(f"{api}/agents/{agent_id}", headers=as_key, timeout=10).json()

        wait_until(lambda: status()["status"] in ("running", "error"), timeout=150, interval=1)
        agent = status()
        assert agent["status"] == "running" and not agent["last_error"], agent
        gateway = requests.get(f"{api}/agents/{agent_id}/gateway-url", headers=as_key, timeout=10)
        assert gateway.status_code == 200 and gateway.json()["url"].startswith("http"), gateway.text
        stopped = requests.post(f"{api}/agents/{agent_id}/stop", headers=as_key, timeout=60)
        assert stopped.status_code == 200, stopped.text
        wait_until(lambda: status()["status"] == "stopped", timeout=60, interval=1)

        os.killpg(processes.pid, signal.SIGINT)  # Ctrl-C
        processes.wait(timeout=60)
        assert processes.returncode in (0, 130), log.read_text()[-3000:]
        restarted = [line for line in log.read_text().splitlines() if "on its own" in line]
        if restarted:  # make run started it again, as it should; a crash is still worth reading
            warnings.warn(f"make run restarted a process: {restarted}\n{log.read_text()[-6000:]}", stacklevel=1)
    except Exception as failure:  # what the processes said is the first thing a failure needs
        raise AssertionError(f"{failure}\n--- make run's output\n{log.read_text()[-6000:]}") from failure
    finally:
        if processes.poll() is None:
            os.killpg(processes.pid, signal.SIGINT)
            try:
                processes.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(processes.pid, signal.SIGKILL)
        if agent_id:  # the installation's agent is not the test session's: remove it here
            for container in docker_engine.containers.list(all=True, ignore_removed=True,
                                                           filters={"label": f"fleet.agent_id={agent_id}"}):
                container.remove(force=True, v=True)
            for volume in docker_engine.volumes.list(filters={"label": f"fleet.agent_id={agent_id}"}):
                volume.remove(force=True)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=2).status_code in (200, 503)  # up, whatever its checks say
    except requests.RequestException:
        time.sleep(0.2)
        return False
