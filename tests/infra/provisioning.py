"""A deploy's steps run to their end in the test's own thread: what the provisioning job and
its readiness looks (agents.tasks.provision_agent, await_agent_ready) do on a worker, each
look after the wait the worker's countdown would give it."""

from __future__ import annotations

import time

from agents.services.provisioning import agent_provision, agent_provision_look


def provision_to_end(*, agent_id, job_id: str | None = None) -> None:
    wait, looks = agent_provision(agent_id=agent_id, job_id=job_id), 0
    while wait is not None:
        time.sleep(wait)
        looks += 1
        wait = agent_provision_look(agent_id=agent_id, job_id=job_id, looks=looks)
