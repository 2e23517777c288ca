"""The spec's "Workspace-agent assignment": an agent shared into a workspace."""

from __future__ import annotations

from django.db import models

from .agent import Agent

DEFAULT_ASSIGNMENT_ROLE = "member"


class WorkspaceAgent(models.Model):
    workspace = models.ForeignKey("workspaces.Workspace", on_delete=models.CASCADE, related_name="agent_assignments")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="assignments")
    # A free label (the spec: "assignment label"), not a permission role.
    role = models.CharField(max_length=50, null=True, blank=True, default=DEFAULT_ASSIGNMENT_ROLE)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=("workspace", "agent"), name="agents_workspaceagent_unique")]
        indexes = [models.Index(fields=("agent", "workspace"), name="agents_assignment_agent_idx")]

    def __str__(self) -> str:
        return f"{self.agent_id} in {self.workspace_id}"


class AssignmentsRevision(models.Model):
    """The revision of an agent's assignments as its row of GET /agents shows them (workspace,
    label, the workspace's name), moved by database triggers (agents.list_revisions). Apart from
    the agent's row so that assigning, relabelling or renaming a workspace never waits for an
    agent's row lock (lifecycle actions hold it across engine calls). No row: never moved."""

    agent = models.OneToOneField(Agent, on_delete=models.DO_NOTHING, db_constraint=False, primary_key=True,
                                 related_name="assignments_revision")
    revision = models.BigIntegerField()

    def __str__(self) -> str:
        return f"{self.agent_id} assignments at {self.revision}"
