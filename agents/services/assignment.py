"""Sharing agents into workspaces (the spec's workspace-agent assignment)."""

from __future__ import annotations

from django.db import transaction

from fleet.errors import NotFound
from fleet.services import model_update
from workspaces.models import Workspace

from ..models import Agent, WorkspaceAgent
from ..models.assignment import DEFAULT_ASSIGNMENT_ROLE


@transaction.atomic
def workspace_agent_assign(
    *, workspace: Workspace, user, agent_id, role: str | None = None
) -> tuple[WorkspaceAgent, bool]:
    """Assign one of `user`'s own agents to `workspace`; (assignment, created).

    Assigning again is not an error: the existing assignment is returned, with its label
    changed when a role is given.
    """
    agent = Agent.objects.filter(pk=agent_id, owner_id=user.pk).first()
    if agent is None:
        raise NotFound("Agent not found, or it is not yours to assign.")
    assignment, created = WorkspaceAgent.objects.select_for_update().get_or_create(
        workspace=workspace, agent=agent, defaults={"role": role or DEFAULT_ASSIGNMENT_ROLE}
    )
    if not created and role is not None:
        model_update(instance=assignment, fields=["role"], data={"role": role})
    return assignment, created


@transaction.atomic
def workspace_agent_unassign(*, workspace: Workspace, agent_id) -> None:
    """Remove the assignment only; the agent keeps running."""
    deleted, _ = WorkspaceAgent.objects.filter(workspace=workspace, agent_id=agent_id).delete()
    if not deleted:
        raise NotFound("The agent is not assigned to this workspace.")
