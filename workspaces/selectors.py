"""Reads of workspaces, members and keys. Access is decided in `workspaces.access` first."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from fleet.api.principal import Principal
from fleet.errors import NotFound

from .access import workspace_roles, workspaces_visible_to
from .models import ApiKey, Invitation, Membership, Workspace
from .roles import Role


def _with_counts(workspaces: QuerySet[Workspace]) -> QuerySet[Workspace]:
    """Annotate `member_count` and `agent_count`.

    Members are counted in a subquery so the agent join cannot multiply them; agents
    through the reverse relation of agents.WorkspaceAgent (no import of the agents app).
    """
    members = (
        Membership.objects.filter(workspace_id=OuterRef("pk"))
        .order_by()
        .values("workspace_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return workspaces.annotate(
        member_count=Coalesce(Subquery(members, output_field=IntegerField()), 0),
        agent_count=Count("agent_assignments", distinct=True),
    )


@dataclass(frozen=True)
class WorkspaceSummary:
    workspace: Workspace  # annotated with member_count and agent_count
    role: Role  # the caller's


def _rows(workspaces: QuerySet[Workspace], roles: dict[UUID, Role]) -> list[WorkspaceSummary]:
    # Meta.ordering is dropped from GROUP BY queries, so the order is stated here.
    rows = _with_counts(workspaces).order_by("-created_at", "id").only("id", "name", "owner_id", "created_at")
    return [WorkspaceSummary(workspace, roles[workspace.id]) for workspace in rows if workspace.id in roles]


def workspace_list(*, principal: Principal) -> list[WorkspaceSummary]:
    """Every workspace the principal lists, newest first, with its role and counts."""
    return _rows(workspaces_visible_to(principal), workspace_roles(principal))


def workspace_summary(*, workspace: Workspace, role: Role) -> WorkspaceSummary:
    """One workspace in the list shape, for a caller whose role is already known."""
    return _rows(Workspace.objects.filter(pk=workspace.pk), {workspace.pk: role})[0]


def membership_list(*, workspace: Workspace) -> QuerySet[Membership]:
    return Membership.objects.filter(workspace=workspace).select_related("user").order_by("created_at", "pk")


def membership_get(*, workspace: Workspace, user_id: UUID) -> Membership:
    membership = Membership.objects.filter(workspace=workspace, user_id=user_id).select_related("user").first()
    if membership is None:
        raise NotFound("No such member in this workspace.")
    return membership


def _pending() -> QuerySet[Invitation]:
    return Invitation.objects.filter(expires_at__gt=timezone.now()).select_related("workspace", "invited_by")


def invitation_list(*, workspace: Workspace) -> QuerySet[Invitation]:
    """The workspace's pending invitations, oldest first (expired ones are not shown)."""
    return _pending().filter(workspace=workspace).order_by("created_at", "pk")


def invitation_get(*, workspace: Workspace, invitation_id: UUID) -> Invitation:
    invitation = invitation_list(workspace=workspace).filter(pk=invitation_id).first()
    if invitation is None:
        raise NotFound("No such invitation in this workspace.")
    return invitation


def invitations_for(*, user) -> QuerySet[Invitation]:
    """The pending invitations addressed to the user's email, oldest first."""
    return _pending().filter(email=(user.email or "").strip().lower()).order_by("created_at", "pk")


def invitation_for_get(*, user, invitation_id: UUID) -> Invitation:
    """One invitation addressed to the user; 404 for any other (nobody else's is visible)."""
    invitation = invitations_for(user=user).filter(pk=invitation_id).first()
    if invitation is None:
        raise NotFound("No such invitation.")
    return invitation


def api_key_list(*, workspace: Workspace) -> QuerySet[ApiKey]:
    """Active keys; revoked ones stay visible in the admin console only."""
    return ApiKey.objects.filter(workspace=workspace, revoked_at__isnull=True).order_by("-created_at")


def api_key_get(*, workspace: Workspace, key_id: UUID) -> ApiKey:
    key = api_key_list(workspace=workspace).filter(pk=key_id).first()
    if key is None:
        raise NotFound("No such API key in this workspace.")
    return key
