"""PostgreSQL restarted under the Procfile's processes (docs/reliability.md): three deploys in
flight (a container made for at least one) when the database stops and comes back a second
later on the same port. While it is away the API answers its health (a 503 naming the database)
and 503 database_unavailable where it needs the database, never a 500, also to the request that
finds a connection broken by the restart. Without restarting anything, every process lives on with the same
processes under it (no worker, pool process or web worker replaced), the API answers its health,
every agent reaches `running` with exactly one container (nothing lost, nothing doubled), beat
sends a periodic job that a worker runs after the restart, and the gateway listener refreshes
again, all within RECOVERY_BOUND seconds of the database's return.

The shared PostgreSQL of the test run is never restarted: the processes run on a cluster of
the test's own (tests.infra.private_postgres) with the schema migrated as the release step does,
and the test reads it as a user does, through the API.
"""

from __future__ import annotations

import logging
import re
import subprocess
import sys
import time

import pytest
import requests

from tests.faults.stack import ROOT, private_stack, wait_for
from tests.infra.docker import SESSION_ID, SESSION_LABEL
from tests.infra.private_postgres import PrivatePostgres
from tests.infra.runtimes import free_loopback_port

logger = logging.getLogger(__name__)

pytestmark = [pytest.mark.docker, pytest.mark.worker]

DEPLOYS = 3
DOWN_SECONDS = 1.0
RECOVERY_BOUND = 40  # seconds from the database's return to all of the above
ADMIN = {"email": "admin@fleet.test", "password": "a long enough password"}
METRICS_TOKEN = "fault-test-metrics"
SAMPLER = "agents.stats: sample"  # beat's most frequent job: every 10 s
SHORT = {
    # A job that met the database away retries after 1, 2, 4... s, not 5, 10, 20.
    "AGENT_PROVISION_RETRY_BACKOFF_SECONDS": "1",
    # The reconciler's deadlines (should a job be lost): a deploying agent's job may give no news
    # for max(5, 15 + 0) s (the test runtime is ready in about a second).
    "AGENT_QUEUED_DEADLINE_SECONDS": "5",
    "AGENT_PROVISION_DEADLINE_SECONDS": "5",
    "AGENT_READY_TIMEOUT_SECONDS": "15",
    "AGENT_PROVISION_DEADLINE_MARGIN_SECONDS": "0",
    "GATEWAY_LISTENER_REFRESH_SECONDS": "0.5",
    "METRICS_TOKEN": METRICS_TOKEN,
}
LISTENER_FAILED = "could not refresh"


def _release(env: dict[str, str]) -> None:
    """The Procfile's release step on the private database (less collectstatic: the web
    process serves static files from the apps here), and the first admin."""
    for command in (["migrate", "--noinput"], ["setup_periodic_tasks"], ["bootstrap_admin"]):
        admin = {"FLEET_ADMIN_EMAIL": ADMIN["email"], "FLEET_ADMIN_PASSWORD": ADMIN["password"]}
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, capture_output=True, text=True,
                              env={**env, **admin})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def _json_error(response: requests.Response, status: int, code: str) -> None:
    assert response.headers["Content-Type"].startswith("application/json"), response.text[:500]
    body = response.json()
    assert (response.status_code, body["code"]) == (status, code), body
    assert body["error"]


def _containers(engine, agent_ids) -> dict[str, list]:
    found = engine.containers.list(all=True, ignore_removed=True,
                                   filters={"label": [f"{SESSION_LABEL}={SESSION_ID}", "fleet.agent_id"]})
    return {agent_id: [c for c in found if c.labels.get("fleet.agent_id") == agent_id] for agent_id in agent_ids}


def _seconds_since_run(web: str, job: str) -> float | None:
    """fleet_periodic_job_seconds_since_run{job}: the older of beat's send and a worker's run."""
    metrics = requests.get(f"{web}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=10)
    if metrics.status_code != 200:
        return None
    found = re.search(rf'^fleet_periodic_job_seconds_since_run\{{job="{re.escape(job)}"\}} (\S+)$', metrics.text, re.M)
    return float(found.group(1)) if found else None


def test_postgres_restarted(tmp_path, docker_engine, docker_engine_url):
    postgres = PrivatePostgres()
    try:
        postgres.create()
        database = postgres.database("fleet")
        _restart_under_the_stack(tmp_path, postgres, database, docker_engine, docker_engine_url)
    finally:
        postgres.remove()


def _restart_under_the_stack(tmp_path, postgres, database, docker_engine, docker_engine_url):
    with private_stack(tmp_path, docker_engine_url, env={**SHORT, "DATABASE_URL": database}) as stack:
        _release(stack.env)
        port = free_loopback_port()
        web = f"http://127.0.0.1:{port}"

        def web_answers():
            try:
                return requests.get(f"{web}/api/health", timeout=2).status_code == 200
            except requests.RequestException:
                return False

        stack.worker("web", ready=web_answers, FLEET_PORT=str(port),
                     PROMETHEUS_MULTIPROC_DIR=str(tmp_path / "prometheus"))
        stack.worker("provision", PROVISION_CONCURRENCY=str(DEPLOYS))  # one job each at once
        stack.worker("periodic")
        stack.worker("worker")
        stack.worker("beat", ready="maxinterval ->")  # the end of its banner
        listener = stack.worker("gateway", ready="Gateway listener shard")

        login = requests.post(f"{web}/api/auth/login", json=ADMIN, timeout=30)
        assert login.status_code == 200, login.text[:500]
        auth = {"Authorization": f"Bearer {login.json()['token']}"}
        ids = []
        for n in range(DEPLOYS):
            answer = requests.post(f"{web}/api/agents/deploy", json={"name": f"restart-{n}"}, headers=auth, timeout=30)
            assert answer.status_code == 201, answer.text[:500]
            ids.append(answer.json()["id"])

        wait_for(lambda: any(_containers(docker_engine, ids).values()), timeout=30, interval=0.02,
                 what="a container of the deploys made", stack=stack)
        pids = {worker.process_type: worker.pids() for worker in stack.workers}
        postgres.stop()
        down = time.monotonic()
        # While it is away the API says so, as JSON a client may retry (never a 500), and answers its health.
        away = requests.get(f"{web}/api/agents", headers=auth, timeout=10)
        _json_error(away, 503, "database_unavailable")
        health = requests.get(f"{web}/api/health", timeout=10)
        assert health.status_code == 503 and health.json()["checks"]["database"] == "error", health.text[:500]
        time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - down)))
        postgres.start()
        back = time.monotonic()
        # Each web worker's connection from before the restart is broken: a request that finds
        # one is a 503 the client retries, never a 500.
        for _ in range(4):
            after = requests.get(f"{web}/api/agents", headers=auth, timeout=10)
            if after.status_code != 200:
                _json_error(after, 503, "database_unavailable")

        def statuses() -> dict[str, str]:
            found = {}
            for agent_id in ids:
                answer = requests.get(f"{web}/api/agents/{agent_id}", headers=auth, timeout=10)
                found[agent_id] = answer.json().get("status") if answer.status_code == 200 else answer.status_code
            return found

        def recovered():
            health = requests.get(f"{web}/api/health", timeout=10)
            if health.status_code != 200 or health.json()["checks"]["database"] != "ok":
                return False
            if set(statuses().values()) != {"running"}:
                return False
            since = _seconds_since_run(web, SAMPLER)  # beat sent it and a worker ran it since
            return since is not None and since < time.monotonic() - back

        wait_for(recovered, timeout=RECOVERY_BOUND, interval=0.5,
                 what=f"recovery (agents: {statuses()})", stack=stack)
        recovered_in = time.monotonic() - back
        logger.info("Recovered %.1f s after PostgreSQL came back", recovered_in)

        # The listener met the database away, and refreshes without error again.
        failures = listener.log.read_text().count(LISTENER_FAILED)
        assert failures >= 1, listener.log.read_text()[-3000:]
        time.sleep(4 * float(SHORT["GATEWAY_LISTENER_REFRESH_SECONDS"]))
        assert listener.log.read_text().count(LISTENER_FAILED) == failures, listener.log.read_text()[-3000:]

        # No process restarted, none of the processes under one replaced.
        assert {worker.process_type: worker.pids() for worker in stack.workers} == pids, stack.logs()
        assert all(worker.process.poll() is None for worker in stack.workers)

        per_agent = _containers(docker_engine, ids)
        assert {agent_id: len(found) for agent_id, found in per_agent.items()} == dict.fromkeys(ids, 1)
        for found in per_agent.values():
            found[0].reload()
            assert found[0].status == "running"
        listed = requests.get(f"{web}/api/agents", headers=auth, timeout=10)
        assert listed.status_code == 200, listed.text[:500]
        names = sorted(re.findall(r'"name":\s*"(restart-\d)"', listed.text))
        assert names == [f"restart-{n}" for n in range(DEPLOYS)]  # nothing lost, nothing doubled
        assert recovered_in < RECOVERY_BOUND
