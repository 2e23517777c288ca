"""The monitoring sweep's observations engine by engine (agents.services.monitoring_engines):
each engine's backend resolved once, a bound on inspects in flight per engine, a hung or dead
engine never holding up the others, nothing outliving the budget, and the runtimes' readiness
asked on the event loop giving the verdicts the blocking path gives. The engines are fakes read
on the event loop (the real engine: tests/agents/backends/test_docker_inspect_async.py)."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import Counter
from contextlib import asynccontextmanager
from unittest import mock

import pytest

from agents.backends.base import BackendUnreachable, LiveState
from agents.backends.engine import NoBackend
from agents.models import Status
from agents.services.monitoring_engines import Limits, agents_observe
from agents.services.monitoring_verdicts import Restarts, Verdict, observe
from tests.factories.agents import AgentFactory

pytestmark = pytest.mark.django_db

EXITED = LiveState(exists=True, running=False, status="exited", exit_code=0)
RUNNING = LiveState(exists=True, running=True, status="running", node="engine-a")


class FakeEngine:
    """A backend read on the event loop: `answer(agent)` is awaited for each inspect."""

    def __init__(self, answer, *, port: int = 1):
        self.answer, self.port = answer, port
        self.in_flight = self.most_in_flight = self.asked = self.cancelled = 0

    def state_reader(self, *, connections: int):
        @asynccontextmanager
        async def reader():
            yield self._read

        return reader()

    async def _read(self, agent) -> LiveState:
        self.asked += 1
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            return await self.answer(agent)
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        finally:
            self.in_flight -= 1

    def inspect(self, agent) -> LiveState:  # the blocking path, for the same verdicts
        return asyncio.run(self.answer(agent))

    def gateway_endpoint(self, agent) -> tuple[str, int]:
        return "127.0.0.1", self.port


def answering(live: LiveState, delay: float = 0.0):
    async def answer(agent):
        await asyncio.sleep(delay)
        return live

    return answer


async def hanging(agent):
    await asyncio.Event().wait()


async def unreachable(agent):
    raise BackendUnreachable("The Docker engine at unix:///gone.sock cannot be reached.")


def agents_on(**engines: int):
    return [AgentFactory(status="running", execution_target_id=f"remote:{name}",
                         gateway_token=secrets.token_urlsafe(32))
            for name, count in engines.items() for _ in range(count)]


def observed(agents, engines: dict, limits: Limits = Limits()):  # noqa: B008 - frozen
    lookups = Counter()

    def backend_of(agent):
        name = agent.execution_target_id.removeprefix("remote:")
        lookups[name] += 1
        if engines.get(name) is None:
            raise NoBackend(f"No runtime backend is registered for {agent.execution_target_id!r}.")
        return engines[name]

    with mock.patch("agents.services.monitoring_engines.backend_of", backend_of):
        return agents_observe(agents, limits=limits), lookups


def test_each_engine_is_resolved_once_and_has_at_most_its_bound_of_inspects_in_flight():
    agents = agents_on(a=20, b=20)
    engines = {"a": FakeEngine(answering(EXITED, 0.01)), "b": FakeEngine(answering(EXITED, 0.01))}

    verdicts, lookups = observed(agents, engines, Limits(per_engine=4))

    assert lookups == {"a": 1, "b": 1}
    assert [engine.most_in_flight for engine in engines.values()] == [4, 4]
    assert set(verdicts.values()) == {Verdict(Status.STOPPED, "The container exited.", restarts=Restarts(0, False))}


def test_a_hung_engine_is_given_up_after_its_strikes_and_holds_up_no_other():
    agents = agents_on(hung=30, ok=30)
    engines = {"hung": FakeEngine(hanging), "ok": FakeEngine(answering(EXITED))}
    started = time.monotonic()

    verdicts, _ = observed(agents, engines, Limits(per_engine=2, call_timeout=0.2, engine_strikes=2, budget=10))

    assert time.monotonic() - started < 3
    assert engines["hung"].asked == 2  # the two strikes; its other agents are not asked
    by_engine = {name: [verdicts[a.pk] for a in agents if a.execution_target_id == f"remote:{name}"]
                 for name in engines}
    assert by_engine["hung"] == [None] * 30
    assert all(verdict.status == Status.STOPPED for verdict in by_engine["ok"])


def test_an_unreachable_engine_is_asked_once_and_its_agents_are_unknown():
    agents = agents_on(gone=10, ok=5)
    engines = {"gone": FakeEngine(unreachable), "ok": FakeEngine(answering(EXITED))}

    verdicts, _ = observed(agents, engines, Limits(per_engine=1))

    assert engines["gone"].asked == 1
    assert sum(verdict is None for verdict in verdicts.values()) == 10
    assert sum(verdict is not None for verdict in verdicts.values()) == 5


def test_agents_of_a_target_no_backend_serves_are_unknown():
    agents = agents_on(unregistered=3, ok=2)

    verdicts, lookups = observed(agents, {"unregistered": None, "ok": FakeEngine(answering(EXITED))})

    assert lookups["unregistered"] == 1
    assert [verdicts[a.pk] is None for a in agents] == [True, True, True, False, False]


def test_the_budget_cancels_every_inspect_still_running():
    agents = agents_on(slow=6)
    engine = FakeEngine(hanging)
    started = time.monotonic()

    verdicts, _ = observed(agents, {"slow": engine}, Limits(per_engine=3, call_timeout=60, budget=0.3))

    assert time.monotonic() - started < 2
    assert (engine.asked, engine.cancelled, engine.in_flight) == (3, 3, 0)
    assert set(verdicts.values()) == {None}


@pytest.mark.parametrize("answer", [
    (200, {"ready": True, "failing": []}),
    (503, {"ready": False, "failing": ["channels", "model"]}),
    (500, {"error": {"message": "boom", "code": "INTERNAL"}}),
    (200, "not json"),
])
def test_readiness_asked_on_the_loop_gives_the_verdict_the_blocking_path_gives(http_receiver, answer):
    http_receiver.route("/readyz", answer)
    engine = FakeEngine(answering(RUNNING), port=http_receiver.port)
    agent = agents_on(a=1)[0]

    verdicts, _ = observed([agent], {"a": engine})

    assert verdicts[agent.pk] == observe(agent, engine)
    assert verdicts[agent.pk].node == "engine-a"


def test_a_runtime_that_does_not_answer_gives_the_verdict_the_blocking_path_gives(http_receiver):
    engine = FakeEngine(answering(RUNNING), port=http_receiver.port)
    http_receiver.stop()  # nothing listens: the connection is refused
    agent = agents_on(a=1)[0]

    verdicts, _ = observed([agent], {"a": engine})

    assert verdicts[agent.pk] == observe(agent, engine)
    unreachable = "The agent's gateway could not be reached (ConnectionError)."
    assert verdicts[agent.pk].reason == f"The runtime is not ready: {unreachable}"


def test_an_agent_with_an_unreadable_token_is_not_ready_on_either_path(http_receiver):
    engine = FakeEngine(answering(RUNNING), port=http_receiver.port)
    agent = agents_on(a=1)[0]
    agent.gateway_token = None

    verdicts, _ = observed([agent], {"a": engine})

    assert verdicts[agent.pk] == observe(agent, engine)
    assert "token is missing" in verdicts[agent.pk].reason
    assert http_receiver.requests == []
