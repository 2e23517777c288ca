"""What a deploy request resolves to: runtime, placement, sandbox profile, resources, name.

Every rule of the spec's deploy table lives here, so deploy (and later migrations) resolve a
request the same way. Registered targets come from `agents.backends.registry`; nothing here
branches on how a target is implemented.
"""

from __future__ import annotations

import math
import secrets
import uuid
from dataclasses import dataclass

from django.conf import settings

from fleet.api.fields import without_control_or_bidi
from fleet.api.principal import Principal
from fleet.errors import FieldErrors, SessionRequired, ValidationFailed

from ..backends import registry
from ..models import RuntimeFamily, SandboxProfile
from ..targets import access as target_access

NAME_MAX_LENGTH = 100
MIN_VCPU = 0.25
MIN_RAM_MB = 512
MIN_DISK_GB = 1


@dataclass(frozen=True)
class DeployRequest:
    """The parsed body of POST /agents/deploy (types checked; rules not yet applied)."""

    name: str | None = None
    runtime_family: str | None = None
    deploy_target: str | None = None
    execution_target_id: str | None = None
    sandbox_profile: str | None = None
    sandbox: str | None = None  # legacy alias of sandbox_profile
    vcpu: float | None = None
    ram_mb: float | None = None
    disk_gb: float | None = None
    migration_draft_id: str | None = None
    model: dict | None = None  # {keyId, name, fallbacks?}: checked by agents.llm_model.choice
    model_routing: str | None = None  # the body's modelRouting: direct or gateway


@dataclass(frozen=True)
class DeployPlan:
    name: str
    runtime_family: str
    deploy_target: str
    execution_target_id: str
    sandbox_profile: str
    vcpu: float
    ram_mb: int
    disk_gb: int


def refuse_session_only_for_keys(principal: Principal, request: DeployRequest) -> None:
    """Remote Docker placement and migration drafts are session-only: a key gets 403
    session_required for them before any lookup (the target rule lives in agents.targets.access)."""
    if not principal.is_api_key:
        return
    target_access.require_session_for_target(
        principal, deploy_target=request.deploy_target, execution_target_id=request.execution_target_id
    )
    if request.migration_draft_id is not None:
        raise SessionRequired("migration_draft_id needs a signed-in session.")


def clean_name(raw: str | None, *, runtime_family: str) -> str:
    # The display-name rule (control characters, NUL included, and bidi controls dropped).
    name = without_control_or_bidi(raw or "").strip()
    if len(name) > NAME_MAX_LENGTH:
        raise ValidationFailed({"name": f"Ensure this field has no more than {NAME_MAX_LENGTH} characters."})
    return name or f"{runtime_family}-agent-{secrets.token_hex(3)}"


def _runtime_family(request: DeployRequest) -> str:
    family = request.runtime_family or settings.DEFAULT_RUNTIME_FAMILY
    if family not in RuntimeFamily.values:
        raise ValidationFailed({"runtime_family": f"'{family}' is not a runtime; use openclaw or hermes."})
    return family


def _placement(principal: Principal, request: DeployRequest) -> tuple[str, str]:
    """(deploy_target, execution_target_id), both checked against the registry, and the target
    against the caller's grants (agents.targets.access: the one deploy-access rule)."""
    explicit_id = request.execution_target_id
    implied = explicit_id and registry.deploy_target_of(explicit_id)
    target = request.deploy_target or implied or settings.DEFAULT_DEPLOY_TARGET
    if target not in registry.DEPLOY_TARGETS:
        raise ValidationFailed({"deploy_target": f"'{target}' is not a deploy target."})
    if target not in registry.registered_deploy_targets():
        raise ValidationFailed({"deploy_target": f"The deploy target '{target}' is not available on this server."})
    execution_target_id = explicit_id or registry.default_execution_target(target)
    if not execution_target_id:
        raise ValidationFailed({"execution_target_id": f"Choose a concrete execution target for '{target}'."})
    if registry.deploy_target_of(execution_target_id) != target:
        raise ValidationFailed(
            {"execution_target_id": f"'{execution_target_id}' is not a target of the '{target}' family."}
        )
    if not registry.is_registered(execution_target_id):
        raise ValidationFailed(
            {"execution_target_id": f"The target '{execution_target_id}' is unknown or unavailable."}
        )
    refusal = target_access.deploy_refusal(principal, execution_target_id)
    if refusal:
        raise ValidationFailed({"execution_target_id": refusal})
    return target, execution_target_id


def _sandbox_profile(request: DeployRequest, *, runtime_family: str, deploy_target: str) -> str:
    if request.sandbox_profile and request.sandbox and request.sandbox_profile != request.sandbox:
        raise ValidationFailed({"sandbox_profile": "sandbox_profile and its alias sandbox disagree."})
    profile = request.sandbox_profile or request.sandbox or SandboxProfile.STANDARD
    if profile not in SandboxProfile.values:
        raise ValidationFailed({"sandbox_profile": f"'{profile}' is not a sandbox profile; use standard or nemoclaw."})
    if profile == SandboxProfile.NEMOCLAW:
        if profile not in settings.ENABLED_SANDBOX_PROFILES:
            raise ValidationFailed({"sandbox_profile": "The nemoclaw profile is not enabled on this server."})
        if runtime_family == RuntimeFamily.HERMES:
            raise ValidationFailed({"sandbox_profile": "The hermes runtime supports only the standard profile."})
    if profile not in registry.sandbox_profiles_of(deploy_target):
        raise ValidationFailed({"sandbox_profile": f"The {profile} profile is not available on {deploy_target}."})
    return profile


def check_migration_draft_id(value: str) -> None:
    """A session may name a migration draft, which must be a UUID (the draft is looked up by
    agents.files.drafts)."""
    try:
        uuid.UUID(str(value))
    except ValueError:
        raise ValidationFailed({"migration_draft_id": "Must be a valid UUID."}) from None


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(value, high))


def _resources(request: DeployRequest) -> tuple[float, int, int]:
    # The defaults live in fleet/settings.py only (DEFAULT_VCPU, DEFAULT_RAM_MB, DEFAULT_DISK_GB).
    vcpu, ram_mb, disk_gb = float(settings.DEFAULT_VCPU), int(settings.DEFAULT_RAM_MB), int(settings.DEFAULT_DISK_GB)
    if settings.PLATFORM_MODE == "paas":
        return vcpu, ram_mb, disk_gb  # paas: the platform decides; plans limit agent counts only
    for field in ("vcpu", "ram_mb", "disk_gb"):
        value = getattr(request, field)
        if value is not None and not math.isfinite(value):
            raise ValidationFailed({field: "A finite number is required."})
    if request.vcpu is not None:
        vcpu = round(_clamp(request.vcpu, MIN_VCPU, settings.MAX_VCPU), 2)
    if request.ram_mb is not None:
        ram_mb = int(_clamp(round(request.ram_mb), MIN_RAM_MB, settings.MAX_RAM_MB))
    if request.disk_gb is not None:
        disk_gb = int(_clamp(round(request.disk_gb), MIN_DISK_GB, settings.MAX_DISK_GB))
    return vcpu, ram_mb, disk_gb


def deploy_plan_resolve(*, principal: Principal, request: DeployRequest) -> DeployPlan:
    """Resolve a parsed request into a deploy plan: family, target, profile and resources with
    their defaults and limits (403 session_required on failure, or 400 validation_error naming
    every bad field at once)."""
    refuse_session_only_for_keys(principal, request)
    errors = FieldErrors()
    if request.migration_draft_id is not None:
        errors.check(lambda: check_migration_draft_id(request.migration_draft_id))
    runtime_family = errors.check(lambda: _runtime_family(request))
    name = errors.check(lambda: clean_name(request.name, runtime_family=runtime_family or "agent"))
    deploy_target, execution_target_id = errors.check(lambda: _placement(principal, request), fallback=(None, None))
    profile = None
    if runtime_family and deploy_target:  # the profile's rules depend on both
        profile = errors.check(
            lambda: _sandbox_profile(request, runtime_family=runtime_family, deploy_target=deploy_target))
    vcpu, ram_mb, disk_gb = errors.check(lambda: _resources(request), fallback=(None, None, None))
    errors.raise_any()
    return DeployPlan(
        name=name,
        runtime_family=runtime_family,
        deploy_target=deploy_target,
        execution_target_id=execution_target_id,
        sandbox_profile=profile,
        vcpu=vcpu,
        ram_mb=ram_mb,
        disk_gb=disk_gb,
    )


_SETTING_OF = {"vcpu": "MAX_VCPU", "ram_mb": "MAX_RAM_MB", "disk_gb": "MAX_DISK_GB"}
_MINIMUM_OF = {"vcpu": MIN_VCPU, "ram_mb": MIN_RAM_MB, "disk_gb": MIN_DISK_GB}


def resource_adjustments(request: DeployRequest, applied) -> dict[str, dict]:
    """The resources the caller asked for that the deploy changed (`applied`: the plan, or the
    agent made from it), each `{requested, applied, why}`: a value the server changes says so
    (raised to a minimum, lowered to a limit, rounded, or decided by the platform)."""
    changed = {}
    for field in ("vcpu", "ram_mb", "disk_gb"):
        requested, value = getattr(request, field), getattr(applied, field)
        if requested is None or float(requested) == float(value):
            continue
        if settings.PLATFORM_MODE == "paas":
            why = "The platform decides resources; the requested value is ignored."
        elif requested < _MINIMUM_OF[field]:
            why = f"Raised to the minimum, {_MINIMUM_OF[field]}."
        elif requested > getattr(settings, _SETTING_OF[field]):
            why = f"Lowered to the server's limit, {_SETTING_OF[field]} ({getattr(settings, _SETTING_OF[field])})."
        else:
            why = "Rounded."
        changed[field] = {"requested": requested, "applied": value, "why": why}
    return changed

