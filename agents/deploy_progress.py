"""Where a deploy is (shown on the agent's console page while it deploys): the step the
provisioning job, or the backend it drives, has reached, kept briefly in the cache.

Steps are written by agents.services.provisioning (and by a backend that pulls or builds an
image, through the WorkloadSpec's `on_step`); nothing here is needed for the deploy itself,
so a cache failure never fails one.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.core.cache import cache

from agents.backends.base import STEP_CREATING, STEP_PULLING

logger = logging.getLogger(__name__)

QUEUED = "queued"
PREPARING = "preparing"
PULLING, CREATING = STEP_PULLING, STEP_CREATING  # the steps a backend reports itself
WAITING = "waiting"
HANDSHAKE = "handshake"
STEPS: tuple[tuple[str, str], ...] = (
    (QUEUED, "Queued"),
    (PREPARING, "Preparing the workload"),
    (PULLING, "Pulling or building the image"),
    (CREATING, "Creating and starting the container"),
    (WAITING, "Waiting for the runtime to be ready"),
    (HANDSHAKE, "Connecting to its gateway"),
)
STEP_TTL = 30 * 60  # seconds: longer than any deploy (AGENT_READY_TIMEOUT_SECONDS and retries)
KEY = "agents:deploy-step:{}"


@dataclass(frozen=True)
class DeployStep:
    name: str
    label: str
    state: str  # done | now | todo


def deploy_step_set(agent_id, step: str) -> None:
    try:
        cache.set(KEY.format(agent_id), step, STEP_TTL)
    except Exception:  # progress is for people; a cache outage must not fail a deploy
        logger.warning("Could not record the deploy step of agent %s", agent_id, exc_info=True)


def deploy_step_get(agent_id) -> str:
    try:
        return cache.get(KEY.format(agent_id)) or QUEUED
    except Exception:
        return QUEUED


def deploy_steps(agent_id) -> list[DeployStep]:
    """Every step, marked done, now or still to come."""
    now = deploy_step_get(agent_id)
    names = [name for name, _ in STEPS]
    reached = names.index(now) if now in names else 0
    return [DeployStep(name, label, "done" if i < reached else "now" if i == reached else "todo")
            for i, (name, label) in enumerate(STEPS)]
