"""The engines and registered targets panel: each target with what the engine probe found.

The periodic probe (agents.services.engine_probe, every 30 s) stores its results; the panel only
reads them, so a dead host never slows the dashboard.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.backends import registry
from agents.services.engine_probe import engines_health


@dataclass(frozen=True)
class TargetHealth:
    target_id: str
    deploy_target: str
    state: str  # ok | unreachable | unknown (not probed recently)
    detail: str


def targets_health() -> list[TargetHealth]:
    return [
        TargetHealth(target_id=result.target_id,
                     deploy_target=registry.deploy_target_of(result.target_id) or result.target_id,
                     state=result.state, detail=result.reason)
        for result in engines_health()
    ]
