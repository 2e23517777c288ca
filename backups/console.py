"""The console's backup views (BackupAdmin.get_urls wires them behind the admin's login): take a
backup now, and restore one after a confirmation page, through the services the API calls."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from agents.models import Agent
from fleet.errors import FleetError

from .errors import BackupNotFound
from .selectors import backup_get
from .services import backup_request, backup_restore_as_draft, backup_restore_into_agent

CONFIRM_TEMPLATE = "admin/backups/confirm_restore.html"


def _agent(request, agent_id) -> Agent:
    agent = Agent.objects.filter(pk=agent_id).first()
    if agent is None or not request.user.has_perm("agents.change_agent"):
        raise Http404("No such agent.")  # the admin's own answer to objects one may not see
    return agent


def _back(agent: Agent) -> HttpResponseRedirect:
    return HttpResponseRedirect(reverse("admin:agents_agent_change", args=[agent.pk]) + "#agent-backups")


def backup_take_view(model_admin, request, agent_id):
    """POST: back the agent up now (the list on the page shows it running, then its result)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    agent = _agent(request, agent_id)
    try:
        backup_request(agent=agent)
    except FleetError as exc:
        model_admin.message_user(request, f"Could not back up {agent.name}: {exc.message}", messages.ERROR)
    else:
        model_admin.message_user(request, f"A backup of {agent.name} was started.", messages.SUCCESS)
    return _back(agent)


def backup_restore_view(model_admin, request, agent_id, backup_id):
    """GET: the confirmation page (into this agent, or as a new agent's draft); POST with
    `confirmed=yes` and `into`: the restore."""
    agent = _agent(request, agent_id)
    try:
        backup = backup_get(agent=agent, backup_id=backup_id)
    except BackupNotFound:
        raise Http404("No such backup.") from None
    if request.method != "POST" or request.POST.get("confirmed") != "yes":
        context = {**model_admin.admin_site.each_context(request), "title": "Restore a backup", "agent": agent,
                   "backup": backup}
        return TemplateResponse(request, CONFIRM_TEMPLATE, context)
    into = request.POST.get("into")
    try:
        if into == "same":
            backup_restore_into_agent(backup=backup)
            done = (f"{agent.name} will be redeployed on its backup of {backup.created_at:%Y-%m-%d %H:%M} UTC "
                    "once the backup is fetched: its events say when.")
        elif into == "new":
            draft = backup_restore_as_draft(backup=backup, user=request.user)
            done = (f"The backup is migration draft {draft.id} (until {draft.expires_at:%Y-%m-%d %H:%M} UTC): "
                    "deploy it with POST /api/agents/deploy and migration_draft_id.")
        else:
            raise Http404("Restore into 'same' or 'new'.")
    except FleetError as exc:
        model_admin.message_user(request, f"Could not restore the backup: {exc.message}", messages.ERROR)
    else:
        model_admin.message_user(request, done, messages.SUCCESS)
    return _back(agent)
