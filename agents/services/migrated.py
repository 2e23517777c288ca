"""A deploy from a migration draft: the manifest fills what the body leaves out, and the
settings it carries (budgets) are written to the new agent in the deploy's transaction."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

from ..models import Agent, Budget
from .selection import DeployRequest


def request_from_manifest(request: DeployRequest, manifest: dict) -> DeployRequest:
    """Body fields win; the manifest gives the rest (never the placement: the target is chosen
    where the agent lands)."""
    resources = manifest.get("resources") or {}
    defaults = {
        "name": manifest.get("name"),
        "runtime_family": manifest.get("runtime_family"),
        "sandbox_profile": manifest.get("sandbox_profile"),
        "vcpu": resources.get("vcpu"),
        "ram_mb": resources.get("ram_mb"),
        "disk_gb": resources.get("disk_gb"),
    }
    if request.sandbox is not None:
        defaults.pop("sandbox_profile")  # the alias in the body decides
    filled = {field: value for field, value in defaults.items()
              if value is not None and getattr(request, field) is None}
    return dataclasses.replace(request, **filled)


def migrated_settings_apply(*, agent: Agent, manifest: dict) -> None:
    for budget in manifest.get("budgets") or []:
        Budget.objects.create(agent=agent, period=budget["period"], limit_micros=int(budget["limit_micros"]),
                              soft_threshold_pct=Decimal(str(budget["soft_threshold_pct"])).quantize(Decimal("0.01")))
