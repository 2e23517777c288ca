"""Usage ingestion through the whole Django stack, in batches of 1,000 events \
(docs/performance.md: at least 5,000 events/s per web worker).

One process plays one web worker: requests go in-process through the middleware, the
agent-token check, validation, pricing, the insert and the rollup UPSERTs. Measured for an
agent without budgets and for one with daily and monthly budgets (the enforcement read runs
after every batch), plus a batch of duplicates (a runtime retrying).
"""

from __future__ import annotations

import itertools
import time

from bench import report

BATCH = 1000
BATCHES = 30
_ids = itertools.count()


def _batch(models) -> dict:
    return {"events": [
        {"request_id": f"bench-{next(_ids)}", "model": models[n % len(models)], "provider": "openai",
         "input_tokens": 1200 + n, "output_tokens": 300 + n, **({"cost_usd": 0.0001} if n % 4 == 0 else {})}
        for n in range(BATCH)
    ]}


def _agent_client(agent):
    from django.test import Client

    from agents.gateway.tokens import usage_token_digest, usage_token_for

    token = usage_token_for(agent)
    agent.usage_token_digest = usage_token_digest(token)
    agent.save(update_fields=["usage_token_digest"])
    return Client(HTTP_X_AGENT_TOKEN=token)


def _run(client, agent, bodies) -> tuple[float, float]:
    """(events per second, this process's CPU ms per batch) over the bodies, one after another.
    The CPU figure leaves out the database's work and other load on a shared machine."""
    started, cpu = time.perf_counter(), time.process_time()
    for body in bodies:
        response = client.post(f"/api/agents/{agent.id}/usage", body, content_type="application/json")
        assert response.status_code == 200, response.content[:300]
    seconds = time.perf_counter() - started
    return len(bodies) * BATCH / seconds, (time.process_time() - cpu) * 1000 / len(bodies)


def main() -> None:
    import orjson

    from accounts.models import User
    from agents.models import Agent, Budget

    owner = User.objects.create(email="bench-ingest@example.com")
    plain = Agent.objects.create(name="bench-plain", owner=owner, status="running", gateway_token="t" * 43)
    budgeted = Agent.objects.create(name="bench-budgeted", owner=owner, status="running", gateway_token="u" * 43)
    for period in ("daily", "monthly"):
        Budget.objects.create(agent=budgeted, period=period, limit_micros=10**15)
    models = ["gpt-4o", "gpt-4o-mini-2024-07-18", "claude-sonnet-4-20250514", "gemini-2.5-flash", "home-made"]

    for agent, title in ((plain, "no budgets"), (budgeted, "daily and monthly budgets")):
        client = _agent_client(agent)
        bodies = [orjson.dumps(_batch(models)) for _ in range(BATCHES + 2)]
        _run(client, agent, bodies[:2])  # warm-up
        rate, cpu_ms = _run(client, agent, bodies[2:])
        report(f"ingestion, {title}, batches of {BATCH}", events_per_second=round(rate),
               ms_per_batch=BATCH / rate * 1000, cpu_ms_per_batch=cpu_ms)
        duplicates, cpu_ms = _run(client, agent, bodies[2:12])
        report(f"ingestion, {title}, re-sent batches (all duplicates)", events_per_second=round(duplicates),
               cpu_ms_per_batch=cpu_ms)
