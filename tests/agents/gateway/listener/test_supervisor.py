"""The supervisor without a runtime at the other end: a gateway that is not there is retried with
growing waits, and the link lives on until the agent is no longer wanted."""

from __future__ import annotations

import time
from itertools import pairwise

import pytest

from agents.gateway import register_listener_hook
from agents.gateway.listener import Backoff, Shard, Supervisor
from tests.factories.agents import AgentFactory
from tests.infra.runtimes import free_loopback_port
from tests.support import wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_gateway_that_does_not_answer_is_retried_with_growing_waits(calls, running_listener):
    agent = AgentFactory(gateway_token="x" * 43, gateway_host_port=free_loopback_port())  # nothing listens there
    register_listener_hook("tests.all", events={"health"}, wants=lambda agents: agents, handler=calls)

    with running_listener(backoff=Backoff(base=0.2, cap=0.8, refused=60, stable=60)) as listener:
        def failed(times: int):
            link = listener.link(agent.pk)
            return link is not None and link.failures >= times and time.monotonic()

        attempts = [wait_until(lambda n=n: failed(n), timeout=10, interval=0.01) for n in (1, 2, 3, 4, 5)]
        link = listener.link(agent.pk)

    gaps = [later - earlier for earlier, later in pairwise(attempts)]
    # Waits of [0.1, 0.2], [0.2, 0.4], [0.4, 0.8] and then the cap's [0.4, 0.8] (plus the attempt itself).
    assert 0.08 <= gaps[0] <= 0.4 and gaps[1] >= 0.18 and gaps[2] >= 0.38 and gaps[3] >= 0.38, gaps
    assert max(gaps) < 1.5  # capped
    assert "could not be reached" in link.last_error and not link.connected
    assert calls.events() == []


def test_a_refresh_interval_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="positive"):
        Supervisor(shard=Shard(), refresh_seconds=0)
