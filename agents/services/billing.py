"""The agent-count limit: 402 billing_limit on deploy and adopt once a user has too many agents.

paas: the user's plan caps the number of agents (`PAAS_PLAN_LIMITS`). Users carry no plan
field yet, so every user is on the "free" tier unless their record grows a `plan` attribute.
self-hosted: unlimited unless `MAX_AGENTS_PER_USER` is above zero.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model

from fleet.errors import BillingLimit

from ..models import Agent

DEFAULT_PLAN = "free"


def agent_limit_for(user) -> int | None:
    """How many agents `user` may own, or None for no limit."""
    if settings.PLATFORM_MODE == "paas":
        plan = getattr(user, "plan", None) or DEFAULT_PLAN
        limits = settings.PAAS_PLAN_LIMITS
        return int(limits.get(plan, limits.get(DEFAULT_PLAN, 0)))
    limit = int(getattr(settings, "MAX_AGENTS_PER_USER", 0) or 0)
    return limit if limit > 0 else None


def agent_quota_check(*, user) -> None:
    """Raise 402 when `user` may not own one more agent. Call inside the creating transaction:
    it locks the user's row, so two concurrent deploys cannot both take the last slot."""
    limit = agent_limit_for(user)
    if limit is None:
        return
    list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))
    if Agent.objects.filter(owner_id=user.pk).count() >= limit:
        raise BillingLimit(f"Your plan allows {limit} agent{'s' if limit != 1 else ''}; delete one or upgrade.")
