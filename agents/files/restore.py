"""Provisioning's step for a migrated agent: restore the consumed draft's `state/` into the new
workload's state storage before the runtime first starts (RuntimeBackend.import_state)."""

from __future__ import annotations

import gzip
import logging

from ..backends.base import BackendError, RuntimeBackend, StateFiles, WorkloadSpec
from ..models import Agent
from .drafts import import_path

logger = logging.getLogger(__name__)


class RestoreImpossible(Exception):
    """The agent's target cannot restore state (its backend lacks import_state)."""


def migration_state_restore(*, backend: RuntimeBackend, agent: Agent, spec: WorkloadSpec) -> bool:
    """Restore the waiting bundle, if any, then delete it; True when something was restored.
    A retried job finds the bundle only if the previous attempt failed before the restore ended."""
    bundle = import_path(agent.pk)
    if not bundle.exists():
        return False
    if not isinstance(backend, StateFiles):
        raise RestoreImpossible("This deploy target cannot restore a migrated agent's state.")
    with gzip.open(bundle, "rb") as archive:
        try:
            backend.import_state(agent, spec, archive)
        except (OSError, EOFError) as exc:
            raise BackendError(f"The migration bundle could not be read: {exc}") from exc
    bundle.unlink(missing_ok=True)
    logger.info("Restored the migrated state of agent %s", agent.pk)
    return True
