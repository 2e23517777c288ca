"""Admin console: agents with their state, owner, placement and workspaces, and the agent page
that acts (start, stop, restart, redeploy, change resources, deploy), shows its charts, events,
budgets, deploy progress, its logs (polled: never a held request) and a terminal. Every action goes through
the same services as the API (so the same rules and events apply); the views are in
agents/console/.

Resources (vCPU, RAM, disk, runtime, sandbox profile) are read-only on the form: saving them
would not change the container. "Change resources" validates them as a deploy does and
redeploys. Secrets (gateway token, usage token digest) are never displayed. Sub-features
register their own admin beside their code (agents/<feature>/admin.py); they are imported at
the end.
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import Prefetch
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.text import Truncator

from fleet.admin_base import ModelAdmin, TabularInline
from fleet.errors import FleetError

from .console import views
from .console.page import BUTTONS, agent_page_context
from .models import Agent, WorkspaceAgent
from .services.lifecycle import agent_delete, agent_redeploy, agent_restart, agent_start, agent_stop
from .stats.admin import AgentStatsChartsMixin

RESOURCE_FIELDS = ("runtime_family", "sandbox_profile", "vcpu", "ram_mb", "disk_gb")


class WorkspaceAgentInline(TabularInline):
    model = WorkspaceAgent
    extra = 0
    fields = ("workspace", "role", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("workspace",)


@admin.register(Agent)
class AgentAdmin(AgentStatsChartsMixin, ModelAdmin):
    list_display = ("name", "coloured_status", "reason", "owner", "deploy_target", "execution_target_id",
                    "runtime_family", "workspace_names", "created_at")
    list_filter = ("status", "deploy_target", "runtime_family", "sandbox_profile", "is_external", "paused_reason")
    search_fields = ("name", "id", "owner__email", "container_id", "container_name", "assignments__workspace__name")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    date_hierarchy = "created_at"
    fieldsets = (
        (None, {"fields": ("id", "name", "owner", "status", "paused_reason", "last_error")}),
        ("Resources (change them with the Change resources button: it redeploys)", {"fields": RESOURCE_FIELDS}),
        ("Placement", {"fields": ("deploy_target", "execution_target_id", "node", "container_id", "container_name",
                                  "gateway_host_port", "gateway_url", "is_external", "created_at", "updated_at")}),
    )
    readonly_fields = (
        "id", "status", "paused_reason", "last_error", *RESOURCE_FIELDS, "deploy_target", "execution_target_id",
        "node", "container_id", "container_name", "gateway_host_port", "gateway_url", "is_external", "created_at",
        "updated_at",
    )
    inlines = (WorkspaceAgentInline,)
    actions = ("start", "stop", "restart", "redeploy")

    # -- list -------------------------------------------------------------------------------

    def get_queryset(self, request):
        assignments = WorkspaceAgent.objects.select_related("workspace").order_by("workspace__name")
        return super().get_queryset(request).prefetch_related(Prefetch("assignments", queryset=assignments))

    @admin.display(description="Workspaces")
    def workspace_names(self, agent: Agent) -> str:
        return ", ".join(a.workspace.name for a in agent.assignments.all()) or "-"

    @admin.display(description="Status", ordering="status")
    def coloured_status(self, agent: Agent) -> str:
        paused = " (paused: budget)" if agent.paused_reason else ""
        return format_html('<span class="fleet-status fleet-status-{}">{}</span>{}', agent.status, agent.status,
                           paused)

    @admin.display(description="Reason")
    def reason(self, agent: Agent) -> str:
        return Truncator(agent.last_error).chars(90) if agent.last_error else ""

    # -- the agent page and its views -------------------------------------------------------

    def get_urls(self):
        def wrap(view):
            return self.admin_site.admin_view(lambda request, *args, **kwargs: view(self, request, *args, **kwargs))

        return [
            path("<path:object_id>/act/<str:verb>/", wrap(views.agent_act), name="agents_agent_act"),
            path("<path:object_id>/resources/", wrap(views.agent_resources), name="agents_agent_resources"),
            path("<path:object_id>/model/", wrap(views.agent_model_view), name="agents_agent_model"),
            path("<path:object_id>/logs/", wrap(views.agent_logs), name="agents_agent_logs"),
            path("<path:object_id>/chat/", wrap(views.agent_chat), name="agents_agent_chat"),
            path("<path:object_id>/open-ui/", wrap(views.agent_open_ui), name="agents_agent_open_ui"),
            path("<path:object_id>/progress/", wrap(views.agent_progress), name="agents_agent_progress"),
            path("<path:object_id>/terminal/", wrap(views.agent_terminal), name="agents_agent_terminal"),
            *super().get_urls(),
        ]

    def add_view(self, request, form_url="", extra_context=None):
        # "Add" is deploying: the deploy service, never a bare row without a workload.
        return views.agent_deploy_view(self, request)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra_context = dict(extra_context or {})
        agent = self.get_object(request, object_id)
        if agent is not None:
            extra_context.update(agent_page_context(agent))
        return super().change_view(request, object_id, form_url, extra_context)

    # -- bulk actions (the list) ------------------------------------------------------------

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

    def _confirmed(self, request, queryset, verb: str):
        """None once the operator confirmed (the page posts `confirmed`), else the page that asks,
        naming every agent the destructive action would touch."""
        if request.POST.get("confirmed") == "yes":
            return None
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "title": BUTTONS[verb].label,
                   "question": BUTTONS[verb].confirm, "agents": list(queryset), "action": verb,
                   "selected": request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)}
        return TemplateResponse(request, "admin/agents/agent/confirm_action.html", context)

    @admin.action(description="Stop the selected agents")
    def stop(self, request, queryset):
        return self._confirmed(request, queryset, "stop") or self._run(request, queryset, agent_stop, "stop")

    @admin.action(description="Restart the selected agents")
    def restart(self, request, queryset):
        return self._confirmed(request, queryset, "restart") or self._run(request, queryset, agent_restart, "restart")

    @admin.action(description="Redeploy the selected agents")
    def redeploy(self, request, queryset):
        return self._confirmed(request, queryset, "redeploy") or self._run(request, queryset, agent_redeploy,
                                                                             "redeploy")

    # -- deleting ---------------------------------------------------------------------------

    # Deleting from the console must also destroy the workload, as DELETE /api/agents/:id does.
    # When the service refuses (the engine cannot be reached), the agent is kept and the
    # operator is told why, as the Stop action does: never a traceback page.
    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except FleetError as exc:
            self.message_user(request, f"Could not delete the agent: {exc.message} It was kept.", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:agents_agent_change", args=[object_id]))

    def delete_model(self, request, obj):
        agent_delete(agent=obj)

    def delete_queryset(self, request, queryset):
        deleted, failed = 0, []
        for agent in queryset:
            try:
                agent_delete(agent=agent)
                deleted += 1
            except FleetError as exc:
                failed.append(f"{agent.name}: {exc.message}")
        for failure in failed:
            self.message_user(request, f"Could not delete {failure} It was kept.", messages.ERROR)
        request.fleet_agents_deleted = deleted if failed else None

    def message_user(self, request, message, level=messages.INFO, *args, **kwargs):
        # Django's bulk delete then reports every selected agent as deleted: say how many were.
        deleted = getattr(request, "fleet_agents_deleted", None)
        if deleted is not None and str(message).startswith("Successfully deleted"):
            request.fleet_agents_deleted = None
            if not deleted:
                return
            message = f"Deleted {deleted} agent(s)."
        super().message_user(request, message, level, *args, **kwargs)


from .budgets import admin as budgets_admin  # noqa: E402, F401
from .targets import admin_clusters as clusters_admin  # noqa: E402, F401
from .terminal import admin as terminal_admin  # noqa: E402, F401
from .usage import admin as usage_admin  # noqa: E402, F401
