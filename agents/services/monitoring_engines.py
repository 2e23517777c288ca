"""The monitoring sweep's observations, engine by engine: each engine's backend resolved once
(not once per agent, nor again for the runtime's endpoint: a registered host's backend is a
database lookup), then

- engines that can be inspected on the event loop (WorkloadStateReader): their agents inspected
  there, at most `per_engine` inspects in flight per engine, and the running ones' readiness
  asked there too through one session shared by the whole sweep (agents.gateway.readiness_async);
- the other engines (Remote Docker's SSH channels, clusters, Proxmox) and adopted runtimes
  (their readiness goes through fleet.netsafety) with blocking calls in `threads` threads;

both at once, within one budget. An inspect longer than `call_timeout` is abandoned and
`engine_strikes` of them close the engine's lane, as an unreachable engine does at once: its
remaining agents are not asked (unknown this sweep), so a hung or dead engine holds up no other.
At the budget everything still running is cancelled and its agent is unknown: nothing outlives
the sweep but a blocking call already under way in a thread (bounded by its own timeout).
Nothing here writes; the database is read only to resolve each engine's backend.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor
from contextlib import AsyncExitStack
from dataclasses import dataclass

from django.db import connections

from ..backends.base import BackendError, BackendUnreachable, RuntimeBackend, WorkloadStateReader
from ..backends.docker_engine import API_TIMEOUT
from ..backends.engine import backend_of
from ..gateway import gateway_readiness, gateway_readiness_async, readiness_session
from ..models import Agent
from .monitoring_verdicts import Verdict, inspect_failed, live_verdict, observe_safely, readiness_verdict, with_live

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limits:
    threads: int = 8  # blocking observations at once, as the sweep always had
    # Inspects in flight per engine on the event loop: an inspect takes the engine well under a
    # millisecond, so a few dozen keep it busy without queueing hundreds of goroutines on it.
    per_engine: int = 32
    readiness_connections: int = 256  # readiness checks in flight, all runtimes together
    call_timeout: float = float(API_TIMEOUT)  # what docker-py would wait for the same inspect
    engine_strikes: int = 2
    budget: float = 25.0  # below the 30-second period, so a sweep ends before the next is due


def _lane(agent: Agent) -> str:
    return agent.execution_target_id


def _backends(agents: list[Agent]) -> dict[str, RuntimeBackend | None]:
    """Each engine's backend, once; None for a target no backend serves any more."""
    backends: dict[str, RuntimeBackend | None] = {}
    for agent in agents:
        lane = _lane(agent)
        if agent.is_external or lane in backends:
            continue
        try:
            backends[lane] = backend_of(agent)
        except BackendError as exc:
            backends[lane] = None
            logger.warning("Monitoring cannot inspect the agents of %s: %s", lane, exc)
    return backends


def _observe_in_thread(agent: Agent, backend: RuntimeBackend | None) -> Verdict | None:
    try:
        return observe_safely(agent, backend)
    finally:
        connections.close_all()  # a backend that read the database did so on this pool thread


def _readiness_in_thread(agent: Agent, backend: RuntimeBackend):
    try:
        return gateway_readiness(agent, backend=backend)
    finally:
        connections.close_all()


def agents_observe(agents: list[Agent], *, limits: Limits = Limits()) -> dict:  # noqa: B008 - frozen
    """agent id -> Verdict, or None when it cannot be told this sweep (engine down or too slow,
    no backend, the budget spent, an unexpected failure: logged)."""
    backends = _backends(agents)
    readers = {lane: backend.state_reader(connections=limits.per_engine) for lane, backend in backends.items()
               if isinstance(backend, WorkloadStateReader)}
    readers = {lane: reader for lane, reader in readers.items() if reader is not None}
    return asyncio.run(_sweep(agents, backends, readers, limits))


async def _sweep(agents, backends, readers, limits: Limits) -> dict:
    verdicts: dict = dict.fromkeys((agent.pk for agent in agents), None)
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=limits.threads, thread_name_prefix="monitoring")
    gates = {lane: asyncio.Semaphore(limits.per_engine) for lane in readers}
    strikes = dict.fromkeys(readers, 0)
    closed: set[str] = set()
    try:
        async with AsyncExitStack() as stack:
            read_of = {lane: await stack.enter_async_context(reader) for lane, reader in readers.items()}
            session = await stack.enter_async_context(readiness_session(connections=limits.readiness_connections))

            async def inspect(agent, lane):
                async with gates[lane]:
                    if lane in closed:
                        return None  # its engine is down or hung: unknown, as an inspect that fails
                    try:
                        return await asyncio.wait_for(read_of[lane](agent), limits.call_timeout)
                    except TimeoutError:
                        inspect_failed(agent, f"the engine did not answer within {limits.call_timeout:g} s")
                        strikes[lane] += 1
                        if strikes[lane] >= limits.engine_strikes:
                            closed.add(lane)
                    except BackendUnreachable as exc:
                        inspect_failed(agent, exc)
                        closed.add(lane)
                    except BackendError as exc:
                        inspect_failed(agent, exc)
                    return None

            async def evented(agent, lane) -> Verdict | None:
                live = await inspect(agent, lane)  # the engine's bound is held for the inspect only
                if live is None:
                    return None
                verdict = live_verdict(agent, live)
                if verdict is not None:
                    return verdict
                backend = backends[lane]
                if agent.gateway_host_port:
                    readiness = await gateway_readiness_async(agent, session, backend=backend)
                else:  # no port recorded: the backend asks its engine for it, blocking
                    readiness = await loop.run_in_executor(pool, _readiness_in_thread, agent, backend)
                return with_live(readiness_verdict(readiness), live)

            async def one(agent) -> None:
                lane = _lane(agent)
                try:
                    if lane in read_of and not agent.is_external:
                        verdicts[agent.pk] = await evented(agent, lane)
                    else:
                        verdicts[agent.pk] = await loop.run_in_executor(
                            pool, _observe_in_thread, agent, backends.get(lane))
                except Exception:  # one agent must never stop the sweep
                    logger.exception("Monitoring failed for agent %s", agent.pk)

            tasks = [asyncio.ensure_future(one(agent)) for agent in agents]
            if tasks:
                _, pending = await asyncio.wait(tasks, timeout=limits.budget)
                for task in pending:
                    task.cancel()
                await asyncio.gather(*pending, return_exceptions=True)
                if pending:
                    logger.warning("Monitoring's budget of %g s ended with %d agents not yet told",
                                   limits.budget, len(pending))
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    if closed:
        logger.warning("Monitoring stopped asking the engines %s this sweep (unreachable or too slow)",
                       ", ".join(sorted(closed)))
    return verdicts
