"""The engines and registered targets panel: each target with its health.

Today each target is probed here (RuntimeBackend.probe) and the answer kept HEALTH_TTL seconds
in the cache, so the dashboard costs at most one probe per target per half minute. When the
periodic engine probe stores its results (DESIGN section 16), `target_health` reads them
instead: the panel only needs (target id, state, detail).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.cache import cache

from agents.backends import registry
from agents.backends.base import BackendError

HEALTH_TTL = 30  # seconds: the probe period DESIGN gives the engine probe
CACHE_KEY = "console:target-health:{}"


@dataclass(frozen=True)
class TargetHealth:
    target_id: str
    deploy_target: str
    state: str  # ok | unreachable | unavailable (no backend on this server)
    detail: str


def probed_targets() -> list[str]:
    """The execution targets that exist now: the registry's enumeration when it has one (every
    host and cluster), else each registered kind that needs no concrete id."""
    enumerate_targets = getattr(registry, "probe_targets", None)
    if enumerate_targets is not None:
        return list(enumerate_targets())
    return [kind for kind, target in registry.TARGETS.items() if target.factory is not None and not target.needs_id]


def target_health(target_id: str) -> TargetHealth:
    deploy_target = registry.deploy_target_of(target_id) or target_id
    key = CACHE_KEY.format(target_id)
    found = cache.get(key)
    if found is None:
        try:
            found = ("ok", registry.backend_for_target(target_id).probe())
        except registry.UnknownTarget:
            found = ("unavailable", "No backend for this target on this server.")
        except BackendError as exc:
            found = ("unreachable", str(exc))
        cache.set(key, found, HEALTH_TTL)
    return TargetHealth(target_id=target_id, deploy_target=deploy_target, state=found[0], detail=found[1])


def targets_health() -> list[TargetHealth]:
    """Every probed target, then the kinds this server has no backend for (so an operator sees
    what is not available here rather than nothing)."""
    rows = [target_health(target_id) for target_id in probed_targets()]
    for kind, target in registry.TARGETS.items():
        if target.factory is None:
            rows.append(TargetHealth(target_id=kind, deploy_target=target.deploy_target, state="unavailable",
                                     detail="No backend for this target on this server."))
    return rows
