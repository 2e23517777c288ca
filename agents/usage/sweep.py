"""The usage pull sweep (beat, every 5 minutes): every serving agent's runtime figures, recorded.

Gateway calls run in a small thread pool; the threads do no database work: each agent's
gateway is resolved in the calling thread (its endpoint may need the engine and the database),
OpenClaw's device key is read there too, and every result is recorded there afterwards.
One agent's failure is logged and counted, never raised.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from fleet.errors import FleetError

from ..gateway import OpenClawGateway, RuntimeGateway, Usage, gateway_for
from ..models import SERVING, Agent, ModelRouting
from .pull import pull_since, usage_pull_record

logger = logging.getLogger(__name__)

PULL_THREADS = 4  # the gateway calls wait on the network, but every runtime they reach shares a host


@dataclass
class SweepReport:
    agents: int = 0
    pulled: int = 0  # keys that brought new usage, over every agent
    unchanged: int = 0
    failed: int = 0  # agents whose pull failed (logged)

    def as_dict(self) -> dict[str, int]:
        return {"agents": self.agents, "pulled": self.pulled, "unchanged": self.unchanged, "failed": self.failed}


def _log_failure(agent: Agent, step: str, exc: Exception) -> None:
    # Fleet's errors carry scrubbed, human messages; anything else is logged by its type only,
    # as its text may echo what a transport saw.
    shown = exc.message if isinstance(exc, FleetError) else type(exc).__name__
    logger.warning("Usage pull of agent %s failed while %s: %s", agent.pk, step, shown)


def _gateway(agent: Agent) -> RuntimeGateway:
    gateway = gateway_for(agent)
    if isinstance(gateway, OpenClawGateway):
        gateway.device  # noqa: B018 - the key is a database read: here, never in a pool thread
    return gateway


def _fetch(job: tuple[RuntimeGateway, object]) -> Usage | Exception:
    gateway, since = job
    try:
        return gateway.usage(since=since)
    except Exception as exc:  # handed back to the calling thread, which logs it
        return exc


def usage_pull_sweep(*, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    since = pull_since(now)
    report = SweepReport()
    ready: list[tuple[Agent, RuntimeGateway]] = []
    # Agents metered by the model gateway have nothing to pull (usage_pull_record).
    for agent in Agent.objects.filter(status__in=SERVING).exclude(model_routing=ModelRouting.GATEWAY).order_by("pk"):
        report.agents += 1
        try:
            ready.append((agent, _gateway(agent)))
        except Exception as exc:
            report.failed += 1
            _log_failure(agent, "resolving its gateway", exc)
    with ThreadPoolExecutor(max_workers=PULL_THREADS) as pool:
        answers = list(pool.map(_fetch, [(gateway, since) for _, gateway in ready]))
    for (agent, _), answer in zip(ready, answers, strict=True):
        if isinstance(answer, Exception):
            report.failed += 1
            _log_failure(agent, "asking its runtime", answer)
            continue
        try:
            result = usage_pull_record(agent=agent, figures=answer.rows, now=now)
        except Exception as exc:
            report.failed += 1
            _log_failure(agent, "recording its figures", exc)
            continue
        report.pulled += result.pulled
        report.unchanged += result.unchanged
    return report
