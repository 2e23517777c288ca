"""The console's changes: every project ModelAdmin derives from fleet.admin_base.ModelAdmin,
whose log_addition/log_change/log_deletion(s) run inside the admin's atomic change view and
call the recorder registered here (fleet sits below audit)."""

from __future__ import annotations

from fleet import admin_base

from .actors import actor_of_request
from .models import Source
from .services import audit_record


def _target_type(obj) -> str:
    meta = obj._meta
    return f"{meta.app_label}.{meta.model_name}"


def _workspace_of(obj):
    value = getattr(obj, "workspace_id", None)
    return value if value is not None and not isinstance(value, int) else None


def record_admin_change(request, obj, verb: str, changed: list[str]) -> None:
    audit_record(action=f"console.{_target_type(obj)}.{verb}", source=Source.CONSOLE,
                 actor=actor_of_request(request), target_type=_target_type(obj), target_id=obj.pk,
                 workspace_id=_workspace_of(obj), detail=changed)


def install() -> None:
    admin_base.register_change_recorder(record_admin_change)
