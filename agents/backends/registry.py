"""execution_target_id -> RuntimeBackend.

An execution target id is `<kind>` or `<kind>:<concrete id>` (`docker`, `k8s:<cluster-id>`,
`remote:<host-id>`). Each kind is one row of `TARGETS`; a new backend registers by adding
its row. Only Docker is registered so far.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from agents.backends.base import RuntimeBackend


class UnknownTarget(ValueError):
    """No registered backend serves this execution target id."""


@dataclass(frozen=True)
class Target:
    deploy_target: str  # the spec's deploy_target this kind serves
    needs_id: bool  # True: only `<kind>:<id>` is valid and no default can be chosen
    factory: Callable[[str], RuntimeBackend]  # execution_target_id -> backend


def _docker(execution_target_id: str) -> RuntimeBackend:
    from agents.backends.docker import DockerBackend

    return DockerBackend()


TARGETS: dict[str, Target] = {
    "docker": Target(deploy_target="docker", needs_id=False, factory=_docker),
}


def _target(execution_target_id: str) -> Target | None:
    kind, _, concrete = (execution_target_id or "").partition(":")
    target = TARGETS.get(kind)
    if target is None or bool(concrete) != target.needs_id:
        return None
    return target


def is_registered(execution_target_id: str) -> bool:
    return _target(execution_target_id) is not None


def backend_for_target(execution_target_id: str) -> RuntimeBackend:
    target = _target(execution_target_id)
    if target is None:
        raise UnknownTarget(f"No runtime backend is registered for execution target {execution_target_id!r}.")
    return target.factory(execution_target_id)


def backend_for(agent) -> RuntimeBackend:
    """The backend that runs `agent` (reads only `agent.execution_target_id`)."""
    return backend_for_target(agent.execution_target_id)


# Every execution-target kind the spec names, registered here or not: kind -> (deploy_target,
# takes `:<id>`). Lets a request's target be classified before its backend is looked up.
KNOWN_KINDS: dict[str, tuple[str, bool]] = {
    "docker": ("docker", False),
    "proxmox": ("proxmox", False),
    "k8s": ("k8s", True),
    "remote": ("remote-docker", True),
}


def deploy_target_of(execution_target_id: str) -> str | None:
    """The deploy_target family an execution target id names (`k8s:<id>` -> `k8s`), None if
    it names no known kind. Says nothing about whether that target is registered here."""
    kind, colon, _ = (execution_target_id or "").partition(":")
    known = KNOWN_KINDS.get(kind)
    if known is None or bool(colon) != known[1]:
        return None
    return known[0]


def registered_deploy_targets() -> set[str]:
    return {target.deploy_target for target in TARGETS.values()}


def default_execution_target(deploy_target: str) -> str | None:
    """The execution target a deploy to `deploy_target` uses when none is named; None when
    the target needs a concrete id (a cluster, a host), which is never chosen automatically."""
    for kind, target in TARGETS.items():
        if target.deploy_target == deploy_target and not target.needs_id:
            return kind
    return None
