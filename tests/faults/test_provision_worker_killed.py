"""The `provision` worker SIGKILLed mid-provision (docs/reliability.md): three deploys claimed by
their jobs (`deploying`), at least one container created, when the jobs die with the worker
(acknowledged late, so their messages sit unacknowledged until the broker's visibility
timeout, an hour). After a new worker starts,
the reconciler takes the deploys over past their (shortened) deadline and every agent reaches
`running` with exactly one container: the new jobs adopt the containers the lost ones created."""

from __future__ import annotations

import pytest
import requests

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from tests.factories.accounts import UserFactory
from tests.faults.stack import SHORT_DEADLINES, containers_of, private_stack, wait_all_running, wait_for
from tests.infra.web_server import procfile_web_server
from tests.support import wait_until

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DEPLOYS = 3
RECOVERY_BOUND = 45  # seconds from the new worker to every agent running
CONTAINER_SETTLES_WITHIN = 20  # seconds


def test_a_provision_worker_killed_mid_provision(tmp_path, docker_engine, docker_engine_url):
    owner = UserFactory()
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}

    with private_stack(tmp_path, docker_engine_url, env=SHORT_DEADLINES) as stack, \
            procfile_web_server(tmp_path, env=stack.env) as web:
        stack.worker("periodic")
        doomed = stack.worker("provision", PROVISION_CONCURRENCY=str(DEPLOYS))  # one job each at once
        for n in range(DEPLOYS):
            answer = requests.post(f"{web}/api/agents/deploy", json={"name": f"killed-{n}"}, headers=auth, timeout=30)
            assert answer.status_code == 201, answer.text[:500]
        ids = [str(pk) for pk in Agent.objects.filter(owner=owner).values_list("pk", flat=True)]

        def mid_provision():  # every deploy claimed by a job and a container made (or one already running)
            statuses = list(Agent.objects.filter(pk__in=ids).values_list("status", flat=True))
            if Status.RUNNING in statuses:
                return True
            claimed = statuses.count(Status.DEPLOYING) == DEPLOYS
            return claimed and any(containers_of(docker_engine, ids).values())

        wait_for(mid_provision, timeout=30, interval=0.02, what="the deploys mid-provision", stack=stack)
        doomed.kill()
        at_kill = {name: (status, len(containers_of(docker_engine, [str(pk)])[str(pk)]))
                   for pk, name, status in Agent.objects.filter(pk__in=ids).values_list("pk", "name", "status")}
        assert sum(status != Status.RUNNING for status, _ in at_kill.values()) >= 1, at_kill  # it hit a deploy
        assert sum(count for _, count in at_kill.values()) >= 1, at_kill  # and a container a new job must adopt

        stack.worker("provision")
        recovered = wait_all_running(stack, ids, timeout=RECOVERY_BOUND,
                                     what=f"every agent running (at the kill: {at_kill})")

        per_agent = containers_of(docker_engine, ids)
        assert {agent_id: len(found) for agent_id, found in per_agent.items()} == dict.fromkeys(ids, 1)
        for found in per_agent.values():
            _settles_running(found[0], stack)
        agents = Agent.objects.filter(owner=owner)
        assert agents.count() == DEPLOYS  # nothing lost, nothing doubled
        assert {a.container_id for a in agents} == {found[0].id for found in per_agent.values()}
        assert recovered < RECOVERY_BOUND


def _settles_running(container, stack) -> None:
    """The container runs (seen once `restarting` just after its row said `running`: a moment is
    allowed); if it never settles, what its engine and its logs said."""
    try:
        wait_until(lambda: container.reload() or container.status == "running", timeout=CONTAINER_SETTLES_WITHIN,
                   interval=0.5)
    except AssertionError:
        container.reload()
        raise AssertionError(f"container {container.short_id} is {container.status}: {container.attrs['State']}\n"
                             f"{container.logs(tail=30).decode(errors='replace')}\n{stack.logs()}") from None
