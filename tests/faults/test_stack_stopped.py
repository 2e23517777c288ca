"""The whole stack stopped with deploys in flight (docs/reliability.md): nothing half-done after
the restart. The Procfile's web, provision and periodic processes on a private Redis, three
deploys mid-provision (claimed, a container made), then every process stopped and started
again, two ways:

- `sigterm`: every process SIGTERMed at once, as a platform stops them (a warm shutdown: Celery gives its unfinished
  messages back), Redis kept;
- `sigkill-empty-redis`: every process SIGKILLed and Redis restarted empty (no persistence):
  no message survives, so the database alone says what is pending; the reconciler, on
  shortened deadlines, takes the deploys over.

Either way every agent reaches `running` with exactly one container (a new job adopts the one
the lost job created), none is doubled or stuck, within RECOVERY_BOUND of the restart."""

from __future__ import annotations

import os
import re
import signal

import pytest
import requests

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from tests.factories.accounts import UserFactory
from tests.faults.stack import SHORT_DEADLINES, containers_of, private_stack, wait_all_running, wait_for
from tests.infra.web_server import procfile_web_server

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DEPLOYS = 3
RECOVERY_BOUND = 45  # seconds from the restarted processes to every agent running


@pytest.mark.parametrize("how", ["sigterm", "sigkill-empty-redis"])
def test_the_stack_stopped_with_deploys_in_flight(how, tmp_path, docker_engine, docker_engine_url):
    owner = UserFactory()
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}

    with private_stack(tmp_path, docker_engine_url, env=SHORT_DEADLINES) as stack:
        with procfile_web_server(tmp_path, env=stack.env) as web:
            workers = [stack.worker("periodic"), stack.worker("provision", PROVISION_CONCURRENCY=str(DEPLOYS))]
            for n in range(DEPLOYS):
                answer = requests.post(f"{web}/api/agents/deploy", json={"name": f"stopped-{n}"}, headers=auth,
                                       timeout=30)
                assert answer.status_code == 201, answer.text[:500]
            ids = [str(pk) for pk in Agent.objects.filter(owner=owner).values_list("pk", flat=True)]

            def in_flight():  # a container made and a deploy not done: the statuses at that moment
                statuses = dict(Agent.objects.filter(pk__in=ids).values_list("name", "status"))
                pending = any(status != Status.RUNNING for status in statuses.values())
                return pending and any(containers_of(docker_engine, ids).values()) and statuses

            at_stop = wait_for(in_flight, timeout=30, interval=0.02, what="the deploys mid-provision", stack=stack)
            if how == "sigterm":  # every process at once, as a platform stops them all
                for worker in reversed(workers):
                    worker.terminate()
                for worker in workers:
                    worker.stop()
            else:
                main_pid = int(re.search(r"main PID: (\d+)", (tmp_path / "web.log").read_text()).group(1))
                os.killpg(main_pid, signal.SIGKILL)
                for worker in reversed(workers):
                    worker.kill()
                stack.redis.stop()
        if how != "sigterm":
            stack.redis.start()

        with procfile_web_server(tmp_path, env=stack.env) as web:
            stack.worker("periodic")
            stack.worker("provision")
            recovered = wait_all_running(stack, ids, timeout=RECOVERY_BOUND,
                                         what=f"every agent running (at stop: {at_stop})")
            assert recovered < RECOVERY_BOUND
            assert requests.get(f"{web}/api/agents", headers=auth, timeout=30).status_code == 200

        per_agent = containers_of(docker_engine, ids)
        assert {agent_id: len(found) for agent_id, found in per_agent.items()} == dict.fromkeys(ids, 1)
        for found in per_agent.values():
            found[0].reload()
            assert found[0].status == "running"
        agents = Agent.objects.filter(owner=owner)
        assert agents.count() == DEPLOYS  # nothing lost, nothing doubled
        assert {a.container_id for a in agents} == {found[0].id for found in per_agent.values()}
