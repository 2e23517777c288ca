"""execution_target_id -> RuntimeBackend, from one table of target kinds.

An execution target id is `<kind>` or `<kind>:<concrete id>` (`docker`, `k8s:<cluster-id>`,
`remote:<host-id>`, `proxmox`). Each kind the contract names is one row of `TARGETS`: the
deploy_target family it serves, whether it needs a concrete id, and the factory of its backend,
or None while this server has no backend for it. A new backend registers by filling its row;
the targets people register (clusters, hosts) are looked up by agents.targets, which fills their
rows when the app is ready, so no backend reads the targets' models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from django.conf import settings

from agents.backends.base import RuntimeBackend, UnknownTarget

ALL_SANDBOX_PROFILES = ("standard", "nemoclaw")


@dataclass(frozen=True)
class Target:
    deploy_target: str  # the spec's deploy_target this kind serves
    needs_id: bool  # True: only `<kind>:<id>` is valid and no default can be chosen
    factory: Callable[[str], RuntimeBackend] | None  # execution_target_id -> backend; None: not here
    # The execution target ids of this kind that exist now and should be probed; None: none listed.
    instances: Callable[[], list[str]] | None = None
    # Capabilities, asked by deploy selection and resource changes (they never name a target):
    # the sandbox profiles its workloads can run,
    sandbox_profiles: tuple[str, ...] = ALL_SANDBOX_PROFILES
    # and, where disk_gb is real storage that can grow but never shrink, why (None: it may shrink).
    disk_shrink_refusal: str | None = None
    # Who may deploy there (agents.targets.access): anyone (no grant), or the owners of personal
    # hosts and those they share them with, sessions only (a key never reaches a person's host);
    # otherwise platform targets, by grant.
    open_to_all: bool = False
    personal: bool = False


# Lazy client loading: each backend (and its client library, docker-py, paramiko, kubernetes,
# proxmoxer: up to 30 MB each) is imported when its target is first used, never at start.


def _docker(execution_target_id: str) -> RuntimeBackend:
    from agents.backends.docker import DockerBackend

    return DockerBackend()


def _proxmox(execution_target_id: str) -> RuntimeBackend:
    from agents.backends.proxmox import ProxmoxBackend

    if not settings.PROXMOX_URL:
        raise UnknownTarget("Proxmox is not configured on this server (PROXMOX_URL).")
    return ProxmoxBackend()


def _proxmox_instances() -> list[str]:
    return ["proxmox"] if settings.PROXMOX_URL else []


TARGETS: dict[str, Target] = {
    "docker": Target(deploy_target="docker", needs_id=False, factory=_docker, instances=lambda: ["docker"],
                     open_to_all=True),
    # The registered targets' rows get their factory from agents.targets (target_backend_set).
    "k8s": Target(deploy_target="k8s", needs_id=True, factory=None,
                  disk_shrink_refusal="a Kubernetes volume claim can grow but never shrink"),
    "remote": Target(deploy_target="remote-docker", needs_id=True, factory=None, personal=True),
    # The contract blocks the nemoclaw profile on proxmox.
    "proxmox": Target(deploy_target="proxmox", needs_id=False, factory=_proxmox, instances=_proxmox_instances,
                      sandbox_profiles=("standard",),
                      disk_shrink_refusal="a Proxmox container's root filesystem can grow but never shrink"),
}


# What the rules ask of the table (one row per target: adding a target is a row here).
DEPLOY_TARGETS = tuple(target.deploy_target for target in TARGETS.values())
OPEN_KINDS = tuple(kind for kind, target in TARGETS.items() if target.open_to_all)
PERSONAL_KINDS = tuple(kind for kind, target in TARGETS.items() if target.personal)
SESSION_ONLY_DEPLOY_TARGETS = tuple(TARGETS[kind].deploy_target for kind in PERSONAL_KINDS)


def target_backend_set(kind: str, *, factory: Callable[[str], RuntimeBackend],
                       instances: Callable[[], list[str]]) -> None:
    """Fill the row of `kind` with the factory of its backends and the ids of its targets."""
    TARGETS[kind] = replace(TARGETS[kind], factory=factory, instances=instances)


def _target(execution_target_id: str) -> Target | None:
    """The row an id names, well formed (`:<id>` exactly when the kind needs one), or None."""
    kind, colon, concrete = (execution_target_id or "").partition(":")
    target = TARGETS.get(kind)
    if target is None or bool(colon) != target.needs_id or (colon and not concrete):
        return None
    return target


def _family(deploy_target: str) -> Target | None:
    return next((target for target in TARGETS.values() if target.deploy_target == deploy_target), None)


def sandbox_profiles_of(deploy_target: str) -> tuple[str, ...]:
    """The sandbox profiles workloads of this deploy target family can run."""
    target = _family(deploy_target)
    return target.sandbox_profiles if target else ALL_SANDBOX_PROFILES


def disk_shrink_refusal_of(deploy_target: str) -> str | None:
    """Why disk_gb may not go down on this family (its storage only grows), or None."""
    target = _family(deploy_target)
    return target.disk_shrink_refusal if target else None


def deploy_target_of(execution_target_id: str) -> str | None:
    """The deploy_target family an execution target id names (`k8s:<id>` -> `k8s`), None if
    it names no known kind. Says nothing about whether that target is registered here."""
    target = _target(execution_target_id)
    return target.deploy_target if target else None


def names_registered_target(execution_target_id: str) -> bool:
    """Whether the id names a target someone registered (`remote:<id>`, `k8s:<id>`), not one the
    operator configured (`docker`, `proxmox`): /api/health lists those to platform admins only."""
    target = _target(execution_target_id)
    return target is None or target.needs_id


def is_registered(execution_target_id: str) -> bool:
    """A backend serves the id's kind here, and the concrete target it names exists now (a
    registered cluster or host; a configured Proxmox)."""
    target = _target(execution_target_id)
    if target is None or target.factory is None:
        return False
    return target.instances is None or execution_target_id in target.instances()


def probe_targets() -> list[str]:
    """Every execution target id that exists now and should be probed."""
    return [target_id for target in TARGETS.values() if target.factory is not None and target.instances
            for target_id in target.instances()]


def backend_for_target(execution_target_id: str) -> RuntimeBackend:
    target = _target(execution_target_id)
    if target is None or target.factory is None:
        raise UnknownTarget(f"No runtime backend is registered for execution target {execution_target_id!r}.")
    return target.factory(execution_target_id)


def backend_for(agent) -> RuntimeBackend:
    """The backend that runs `agent` (reads only `agent.execution_target_id`)."""
    return backend_for_target(agent.execution_target_id)


def registered_deploy_targets() -> set[str]:
    return {target.deploy_target for target in TARGETS.values() if target.factory is not None}


def default_execution_target(deploy_target: str) -> str | None:
    """The execution target a deploy to `deploy_target` uses when none is named; None when
    the target needs a concrete id (a cluster, a host), which is never chosen automatically,
    or has no backend here."""
    for kind, target in TARGETS.items():
        if target.deploy_target == deploy_target and not target.needs_id and target.factory is not None:
            return kind
    return None
