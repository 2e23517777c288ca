"""Admin console: agents with their state, owner, placement and workspaces, and lifecycle
actions that go through the same services as the API (so the same rules and events apply).

Secrets (gateway token, usage token digest) are never displayed. Sub-features register their
own admin beside their code (agents/<feature>/admin.py); they are imported at the end.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import Prefetch

from fleet.errors import FleetError

from .models import Agent, WorkspaceAgent
from .services.lifecycle import agent_delete, agent_redeploy, agent_restart, agent_start, agent_stop
from .stats.admin import AgentStatsChartsMixin


class WorkspaceAgentInline(admin.TabularInline):
    model = WorkspaceAgent
    extra = 0
    fields = ("workspace", "role", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("workspace",)


@admin.register(Agent)
class AgentAdmin(AgentStatsChartsMixin, admin.ModelAdmin):
    list_display = ("name", "status", "owner", "deploy_target", "execution_target_id", "runtime_family",
                    "workspace_names", "paused_reason", "created_at")
    list_filter = ("status", "deploy_target", "runtime_family", "sandbox_profile", "is_external", "paused_reason")
    search_fields = ("name", "id", "owner__email", "container_id", "container_name", "assignments__workspace__name")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    date_hierarchy = "created_at"
    fields = (
        "id", "name", "owner", "status", "paused_reason", "last_error", "runtime_family", "deploy_target",
        "execution_target_id", "sandbox_profile", "vcpu", "ram_mb", "disk_gb", "node", "container_id",
        "container_name", "gateway_host_port", "gateway_url", "is_external", "created_at", "updated_at",
    )
    readonly_fields = (
        "id", "status", "last_error", "deploy_target", "execution_target_id", "node", "container_id",
        "container_name", "gateway_host_port", "gateway_url", "is_external", "created_at", "updated_at",
    )
    inlines = (WorkspaceAgentInline,)
    actions = ("start", "stop", "restart", "redeploy")

    def has_add_permission(self, request):
        return False  # agents are deployed or adopted through the API, which provisions them

    def get_queryset(self, request):
        assignments = WorkspaceAgent.objects.select_related("workspace").order_by("workspace__name")
        return super().get_queryset(request).prefetch_related(Prefetch("assignments", queryset=assignments))

    @admin.display(description="Workspaces")
    def workspace_names(self, agent: Agent) -> str:
        return ", ".join(a.workspace.name for a in agent.assignments.all()) or "-"

    def _run(self, request, queryset, service, verb: str) -> None:
        done, failed = 0, []
        for agent in queryset:
            try:
                service(agent=agent)
                done += 1
            except FleetError as exc:
                failed.append(f"{agent.name}: {exc.message}")
        if done:
            self.message_user(request, f"{verb.capitalize()}: {done} agent(s).", messages.SUCCESS)
        for failure in failed:
            self.message_user(request, f"Could not {verb} {failure}", messages.ERROR)

    @admin.action(description="Start the selected agents")
    def start(self, request, queryset):
        self._run(request, queryset, agent_start, "start")

    @admin.action(description="Stop the selected agents")
    def stop(self, request, queryset):
        self._run(request, queryset, agent_stop, "stop")

    @admin.action(description="Restart the selected agents")
    def restart(self, request, queryset):
        self._run(request, queryset, agent_restart, "restart")

    @admin.action(description="Redeploy the selected agents")
    def redeploy(self, request, queryset):
        self._run(request, queryset, agent_redeploy, "redeploy")

    # Deleting from the console must also destroy the workload, as DELETE /api/agents/:id does.
    def delete_model(self, request, obj):
        agent_delete(agent=obj)

    def delete_queryset(self, request, queryset):
        for agent in queryset:
            agent_delete(agent=agent)


from .budgets import admin as budgets_admin  # noqa: E402, F401
from .targets import admin_clusters as clusters_admin  # noqa: E402, F401
from .usage import admin as usage_admin  # noqa: E402, F401
