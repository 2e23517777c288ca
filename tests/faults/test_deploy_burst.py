"""A burst of 50 deploys must not delay a sampler tick, a monitoring sweep or an alert delivery
by more than one period (docs/reliability.md), with the real worker processes: the Procfile's
`provision`, `periodic`, `delivery` and `worker` lines on a private Redis, the web process
taking the 50 deploys over HTTP, 50 real containers (the small test image) on the test engine.

While the deploys run, the sampler (`agents.stats.sample`, period 10 s), the monitoring sweep
(`agents.tasks.monitor_agents`, period 30 s) and an alert delivery run
(`alerts.dispatch_deliveries`, held to the sampler's 10 s: it has no beat period of its own)
are sent every half second to three seconds, far more often than beat does (bench.ticks, shared with `python -m
bench deploy_burst`); each must be done, not merely started, within its period of being sent.
Every tick sent during the burst is counted: none may be left undone.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from accounts.tokens import session_token_issue
from agents.models import Agent, Status
from bench.ticks import Tick, TickTimer
from tests.factories.accounts import UserFactory
from tests.faults.stack import containers_of, private_stack, wait_for
from tests.infra.web_server import procfile_web_server

pytestmark = [pytest.mark.docker, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

BURST = 50
# The sampler reads every container's stats (50 here) and the sweep looks at every agent: sent
# much more often than that, their ticks would queue behind each other rather than the deploys.
TICKS = [
    Tick("agents.stats.sample", "periodic", period=10, send_every=2),
    Tick("agents.tasks.monitor_agents", "periodic", period=30, send_every=3),
    Tick("alerts.dispatch_deliveries", "delivery", period=10, send_every=0.5),
]
SETTLE_BOUND = 120  # seconds for the 50 agents to run


def test_a_burst_of_deploys_delays_no_periodic_work(tmp_path, docker_engine, docker_engine_url):
    owner = UserFactory()
    auth = {"Authorization": f"Bearer {session_token_issue(user=owner)}"}

    with private_stack(tmp_path, docker_engine_url, env={"DEPLOY_RATE_PER_USER": "100/1m"}) as stack, \
            procfile_web_server(tmp_path, env=stack.env) as web:
        for process_type in ("provision", "periodic", "delivery", "worker"):
            stack.worker(process_type)
        warm = TickTimer(stack.redis.url, TICKS)
        warm.start()
        wait_for(lambda: all(warm.delays.values()), timeout=30, what="every periodic kind answering once", stack=stack)
        warm.stop()

        timer = TickTimer(stack.redis.url, TICKS)
        timer.start()
        started = time.monotonic()

        def deploy(n: int) -> requests.Response:
            return requests.post(f"{web}/api/agents/deploy", json={"name": f"burst-{n}"}, headers=auth, timeout=30)

        with ThreadPoolExecutor(max_workers=4) as pool:
            answers = list(pool.map(deploy, range(BURST)))
        refused = [a.text[:200] for a in answers if a.status_code != 201]
        assert not refused, refused
        ids = [a.json()["id"] for a in answers]

        def settled():
            return not Agent.objects.filter(pk__in=ids).exclude(status=Status.RUNNING).exists()

        wait_for(settled, timeout=SETTLE_BOUND, interval=0.5, what="the burst's agents running", stack=stack)
        burst_seconds = time.monotonic() - started
        delays = timer.stop()

        per_agent = containers_of(docker_engine, ids)
        assert {agent_id: len(found) for agent_id, found in per_agent.items()} == dict.fromkeys(ids, 1)
        assert Agent.objects.filter(owner=owner).count() == BURST  # nothing lost, nothing doubled
        for tick in TICKS:  # the timer kept its cadence; each tick done within its period, or still pending for less
            seen = delays[tick.task]
            assert timer.sent[tick.task] >= burst_seconds / tick.send_every - 1, (tick.task, timer.sent, burst_seconds)
            assert max(seen) < tick.period, (tick.task, sorted(seen)[-5:], burst_seconds)
        assert all(waited < next(t.period for t in TICKS if t.task == name) for name, waited in timer.late), timer.late
        summary = ", ".join(f"{name} {max(seen):.2f} s over {len(seen)}" for name, seen in delays.items())
        print(f"\n{BURST} deploys settled in {burst_seconds:.1f} s; slowest tick per kind: {summary}")  # noqa: T201
