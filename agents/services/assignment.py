"""Sharing agents into workspaces (the spec's workspace-agent assignment)."""

from __future__ import annotations

from django.db import transaction

from fleet.api.principal import Principal
from fleet.errors import NotFound
from fleet.services import model_update
from workspaces.models import Workspace

from ..models import Agent, WorkspaceAgent
from ..models.assignment import DEFAULT_ASSIGNMENT_ROLE
from ..targets.access import require_session_for_target


@transaction.atomic
def workspace_agent_assign(
    *, workspace: Workspace, principal: Principal, agent_id, role: str | None = None
) -> tuple[WorkspaceAgent, bool]:
    """Assign one of the caller's own agents to `workspace`; (assignment, created).

    Assigning again is not an error: the existing assignment is returned, with its label
    changed when a role is given. A workspace API key is confined to its workspace, so it
    may only relabel agents already assigned there: pulling in another of its issuer's
    agents would let the key reach past its workspace (security review, defect 1).
    """
    agents = Agent.objects.filter(pk=agent_id, owner_id=principal.user.pk)
    if principal.is_api_key:
        agents = agents.filter(assignments__workspace_id=principal.workspace_id)
    agent = agents.first()
    if agent is None:
        raise NotFound("Agent not found, or it is not yours to assign.")
    require_session_for_target(principal, deploy_target=agent.deploy_target)
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
