"""A rotated provider key pushed to the 200 OpenClaw agents that use it (docs/api.md "Each agent's model"): seconds from
the key's PATCH to every agent's runtime having taken the new key.

    DATABASE_URL=postgres://... .venv/bin/python -m bench model_rotation

The agents' gateway is the loopback protocol-4 server of bench/gateway_calls (its own process),
which checks each handshake as OpenClaw does and answers config.get and config.patch at once, so
the figure is Fleet's own work: the rows, the rate book, a handshake and two calls per agent.
Two figures: one worker slot (the tasks run one after another, as a runtime worker of
concurrency 1 would) and eight at once (RUNTIME_CONCURRENCY=8 on one web-sized process).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fleet.settings")

from bench import report  # noqa: E402
from bench.gateway_calls import TOKEN, loopback_gateway  # noqa: E402

AGENTS = 200
SLOTS = 8


def _world(port: int):
    from django.conf import settings

    from accounts.models import User
    from agents.models import Agent, AgentModel
    from llm.services import key_create

    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    owner = User.objects.create(email=f"bench-rotation-{time.time_ns()}@example.com")
    key = key_create(provider="openai-compatible", label="bench", api_key="sk-bench-first",
                     base_url="http://127.0.0.1:9/v1", created_by=owner, user=owner)
    agents = Agent.objects.bulk_create(
        (Agent(name=f"bench-rotation-{n}", owner=owner, status="running", runtime_family="openclaw", node="bench",
               container_id=f"{n:064x}", gateway_host_port=port, gateway_token=TOKEN) for n in range(AGENTS)),
        batch_size=500,
    )
    AgentModel.objects.bulk_create(AgentModel(agent=agent, key=key, name="bench-model") for agent in agents)
    return key


def _rotate(key, secret: str, slots: int) -> tuple[float, int]:
    """Seconds from the rotation's commit to every agent applied, running the queued tasks on
    `slots` threads; and how many were applied."""
    from django.db import connections

    from agents.llm_model import services
    from agents.models import AgentModel
    from llm.services import key_update

    queued: list[str] = []
    original = services.model_apply_enqueue
    services.model_apply_enqueue = queued.append  # what the task would get: the agent's id
    try:
        started = time.perf_counter()
        key_update(key=key, api_key=secret)  # commits: the signal queues every agent using the key
        with ThreadPoolExecutor(max_workers=slots) as pool:
            list(pool.map(lambda agent_id: services.model_apply(agent_id=agent_id), queued))
            elapsed = time.perf_counter() - started
            every_thread = threading.Barrier(slots)  # one call per thread: each closes its own connection
            list(pool.map(lambda _: (every_thread.wait(), connections.close_all()), range(slots)))
    finally:
        services.model_apply_enqueue = original
    return elapsed, AgentModel.objects.filter(key=key, applied_at__isnull=False).count()


def main() -> None:
    with loopback_gateway() as port:
        key = _world(port)
        for slots, secret in ((1, "sk-bench-second"), (SLOTS, "sk-bench-third")):
            seconds, applied = _rotate(key, secret, slots)
            report(f"a rotated key pushed to {AGENTS} OpenClaw agents, {slots} worker slot(s)",
                   seconds=seconds, applied=applied, per_agent_ms=seconds * 1000 / AGENTS)


if __name__ == "__main__":
    import django

    django.setup()
    main()
