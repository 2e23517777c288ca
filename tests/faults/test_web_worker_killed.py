"""A web worker SIGKILLed mid-request (docs/reliability.md): nothing half-done after the restart.

The Procfile's web process (granian, 2 workers) serves a deploy that waits, deterministically,
inside its transaction: with a plan limit (MAX_AGENTS_PER_USER) the deploy locks its owner's
row (services.billing.agent_quota_check), and the test holds that lock. The worker whose
database connection waits on it is the one handling the request; it is SIGKILLed there. Then:
granian starts a worker in its place (same main process, the server answers again); the
killed request left no agent (its transaction died with its connection); the client's retry
with the same Idempotency-Key makes exactly one agent, and every agent reaches `running` with
one container, none left `queued` (the reconciler, on shortened deadlines, is the net)."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import psycopg
import pytest
import requests
from django.db import connection

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from bench.__main__ import database_url
from tests.factories.accounts import UserFactory
from tests.faults.stack import containers_of, private_stack, wait_for
from tests.infra.web_server import granian_pids, procfile_web_server

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

SHORT_DEADLINES = {
    "AGENT_QUEUED_DEADLINE_SECONDS": "3",
    "AGENT_PROVISION_DEADLINE_SECONDS": "5",
    "AGENT_READY_TIMEOUT_SECONDS": "15",
    "AGENT_PROVISION_DEADLINE_MARGIN_SECONDS": "0",
}
RESPAWN_BOUND = 15  # seconds from the kill to a new worker answering (granian waits 3.5 s first)
RECOVERY_BOUND = 45  # seconds from the respawn to every agent running


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[len("socket:["):-1])
    return inodes


def owner_of_local_port(pids, port: int) -> int:
    """Which of `pids` holds the TCP socket whose local port is `port` (a database connection:
    PostgreSQL knows it as the client port)."""
    by_inode = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port:
                by_inode[fields[9]] = port
    owners = [pid for pid in pids if _socket_inodes(pid) & by_inode.keys()]
    assert len(owners) == 1, (owners, port)
    return owners[0]


def _waiting_client_port(conn) -> int | None:
    """The client port of the database connection waiting on the lock of the user's row."""
    row = conn.execute(
        "SELECT client_port FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'"
        " AND query ILIKE %s",
        ["%FOR UPDATE%"],
    ).fetchone()
    return row[0] if row else None


def test_a_web_worker_killed_mid_request(tmp_path, docker_engine, docker_engine_url):
    owner = UserFactory()
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}
    env = {**SHORT_DEADLINES, "MAX_AGENTS_PER_USER": "10"}  # a plan limit: the deploy locks its owner's row
    dsn = database_url(connection.settings_dict)

    with private_stack(tmp_path, docker_engine_url, env=env) as stack, \
            procfile_web_server(tmp_path, env=stack.env) as web:
        stack.worker("provision")
        stack.worker("periodic")
        main_pid, workers = granian_pids(tmp_path / "web.log")
        assert len(workers) == 2, workers

        outcome: dict = {}
        keyed = {**auth, "Idempotency-Key": "killed-mid-request"}

        def doomed_request():
            try:
                outcome["answer"] = requests.post(f"{web}/api/agents/deploy", json={"name": "doomed"}, headers=keyed,
                                                  timeout=60)
            except requests.RequestException as exc:
                outcome["error"] = exc

        with psycopg.connect(dsn, autocommit=False) as holder, psycopg.connect(dsn, autocommit=True) as observer:
            holder.execute("SELECT id FROM accounts_user WHERE id = %s FOR UPDATE", [owner.pk])
            client = threading.Thread(target=doomed_request)
            client.start()
            port = wait_for(lambda: _waiting_client_port(observer), timeout=20, interval=0.05,
                            what="the deploy waiting on its owner's row", stack=stack)
            victim = owner_of_local_port(workers.values(), port)
            os.kill(victim, signal.SIGKILL)
            killed = time.monotonic()
            client.join(timeout=30)
            holder.rollback()
        assert "error" in outcome, outcome  # the connection died with the worker: no answer
        assert not Agent.objects.filter(owner=owner).exists()  # and nothing of the request was kept

        def respawned():
            pid, now = granian_pids(tmp_path / "web.log")
            return pid == main_pid and victim not in now.values() and len(now) == 2 and all(
                requests.get(f"{web}/api/health", timeout=5).status_code == 200 for _ in range(4))

        wait_for(respawned, timeout=RESPAWN_BOUND, interval=0.5, what="granian's new worker answering", stack=stack)
        assert time.monotonic() - killed < RESPAWN_BOUND
        _, after = granian_pids(tmp_path / "web.log")
        assert all(os.path.exists(f"/proc/{pid}") for pid in after.values()), after
        assert os.path.exists(f"/proc/{main_pid}")  # the web process itself was not restarted

        retried = requests.post(f"{web}/api/agents/deploy", json={"name": "doomed"}, headers=keyed, timeout=30)
        assert retried.status_code == 201, retried.text[:500]  # the first never committed: a new deploy
        again = requests.post(f"{web}/api/agents/deploy", json={"name": "doomed"}, headers=keyed, timeout=30)
        assert again.headers.get("Idempotent-Replayed") == "true", again.text[:500]
        other = requests.post(f"{web}/api/agents/deploy", json={"name": "after"}, headers=auth, timeout=30)
        assert other.status_code == 201, other.text[:500]
        respawned_at = time.monotonic()

        def all_running():
            stack.send("agents.tasks.reconcile_deploys", queue="periodic")  # beat's every minute, sooner
            return not Agent.objects.filter(owner=owner).exclude(status=Status.RUNNING).exists()

        wait_for(all_running, timeout=RECOVERY_BOUND, interval=1, what="every agent running", stack=stack)
        assert time.monotonic() - respawned_at < RECOVERY_BOUND

        agents = Agent.objects.filter(owner=owner)
        assert sorted(a.name for a in agents) == ["after", "doomed"]  # nothing lost, nothing doubled
        per_agent = containers_of(docker_engine, [str(a.pk) for a in agents])
        assert {agent_id: len(found) for agent_id, found in per_agent.items()} == dict.fromkeys(per_agent, 1)
        assert {a.container_id for a in agents} == {found[0].id for found in per_agent.values()}
