"""Policy versions: the current one (the default created on first use), and storing a new one."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from agents.models import Agent

from ..models import SandboxPolicy
from ..policy import default_policy, policy_validate


def policy_current(agent: Agent) -> SandboxPolicy:
    """The agent's newest policy version; version 1 (the default) is created on first use, so
    agents need not know about sandboxes when they deploy one."""
    row = SandboxPolicy.objects.filter(agent=agent).order_by("-version").first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return SandboxPolicy.objects.create(agent=agent, version=1, document=default_policy())
    except IntegrityError:  # a concurrent first read created it
        return SandboxPolicy.objects.filter(agent=agent).order_by("-version").first()


@transaction.atomic
def policy_save(*, agent: Agent, body, user=None) -> SandboxPolicy:
    """Validate `body` against the current version and store it as the next one (not yet applied)."""
    Agent.objects.select_for_update().filter(pk=agent.pk).first()  # one writer of versions at a time
    current = policy_current(agent)
    document = policy_validate(body, current=current.document)
    return SandboxPolicy.objects.create(agent=agent, version=current.version + 1, document=document,
                                        created_by=user)
