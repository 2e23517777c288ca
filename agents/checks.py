"""System checks of the agents app (`manage.py check`, and before `migrate`: the Procfile's
release step and `make run` print them): configurations that start but leave agents unable to
reach Fleet."""

from __future__ import annotations

from django.conf import settings
from django.core import checks

from .models import ModelRouting
from .services.workload import internal_url_warning

BRIDGED_AGENTS_CANNOT_REPORT = "agents.W001"
UNKNOWN_MODEL_ROUTING = "agents.E001"


@checks.register()
def check_internal_url(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    warning = internal_url_warning()
    if warning is None:
        return []
    return [checks.Warning(warning.problem, hint=warning.remedy, id=BRIDGED_AGENTS_CANNOT_REPORT)]


@checks.register()
def check_model_routing(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    value = settings.DEFAULT_MODEL_ROUTING.strip().lower()
    if value in ModelRouting.values:
        return []
    return [checks.Error(f"DEFAULT_MODEL_ROUTING is {settings.DEFAULT_MODEL_ROUTING!r}.",
                         hint=f"Set it to one of: {', '.join(ModelRouting.values)}.", id=UNKNOWN_MODEL_ROUTING)]
