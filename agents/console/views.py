"""The console's agent views (AgentAdmin.get_urls wires them, behind the admin's login and
permissions): lifecycle buttons, change resources, the model, deploy, deploy progress, the agent's UI (a
link through the gateway proxy), its logs followed live, chat turns and the terminal's ticket.

The logs and chat stream through the same services and event bodies as the API: they wait on
the web process's event loop (fleet.edge), so open agent pages hold no worker."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect, JsonResponse
from django.template.response import TemplateResponse
from django.urls import reverse

from fleet.api.errors import error_body, status_of
from fleet.api.principal import Principal
from fleet.edge.sse import wants_event_stream
from fleet.errors import FleetError, ValidationFailed
from workspaces.access import workspace_roles
from workspaces.models import Workspace
from workspaces.roles import Role

from ..chat.serializers import ChatIn
from ..chat.sse import chat_response
from ..deploy_progress import deploy_steps
from ..llm_model.choice import usable_keys
from ..llm_model.services import agent_model_clear, model_record, model_set_from_body
from ..logs.query import logs_query_from
from ..logs.services import agent_logs_list
from ..logs.sse import follow_response, log_line_data
from ..models import IN_FLIGHT, SERVING, Agent, TerminalVia
from ..proxy.sessions import gateway_session_create
from ..selectors import agent_workspace_ids
from ..services.deploy import agent_deploy, agent_deploy_shared
from ..services.lifecycle import agent_redeploy, agent_restart, agent_start, agent_stop
from ..services.resources import ResourceChange, agent_resources_change
from ..services.selection import DeployRequest, resource_adjustments
from ..targets.access import deployable_targets, target_label
from ..terminal.access import terminal_agent
from ..terminal.serializers import TerminalTicketOut
from ..terminal.tickets import terminal_ticket_issue
from .forms import AgentModelForm, DeployForm, ResourcesForm, model_value
from .page import BUTTONS

SERVICES = {"start": agent_start, "stop": agent_stop, "restart": agent_restart, "redeploy": agent_redeploy}
DONE = {"start": "started", "stop": "stopped", "restart": "restarted", "redeploy": "queued for redeployment"}


def _change_url(agent_id) -> str:
    return reverse("admin:agents_agent_change", args=[agent_id])


def _agent(model_admin, request, object_id, *, change: bool) -> Agent:
    agent = model_admin.get_object(request, object_id)
    if agent is None:
        raise Http404("No such agent.")
    allowed = model_admin.has_change_permission(request, agent) if change else \
        model_admin.has_view_permission(request, agent)
    if not allowed:
        raise Http404("No such agent.")  # the admin's own answer to objects one may not see
    return agent


def agent_act(model_admin, request, object_id, verb: str):
    """POST: one lifecycle button, through the service the API calls; the result as a message."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    if verb not in SERVICES:
        raise Http404("No such action.")
    agent = _agent(model_admin, request, object_id, change=True)
    try:
        SERVICES[verb](agent=agent)
    except FleetError as exc:
        model_admin.message_user(request, f"Could not {BUTTONS[verb].label.lower()} {agent.name}: {exc.message}",
                                 messages.ERROR)
    else:
        model_admin.message_user(request, f"{agent.name} was {DONE[verb]}.", messages.SUCCESS)
    return HttpResponseRedirect(_change_url(agent.pk))


def agent_resources(model_admin, request, object_id):
    """Change resources: validated as a deploy, applied by a redeploy (and said so)."""
    agent = _agent(model_admin, request, object_id, change=True)
    initial = {"vcpu": agent.vcpu, "ram_mb": agent.ram_mb, "disk_gb": agent.disk_gb,
               "sandbox_profile": agent.sandbox_profile}
    form = ResourcesForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            agent_resources_change(principal=Principal(user=request.user), agent=agent,
                                   change=ResourceChange(**form.cleaned_data))
        except ValidationFailed as exc:
            form.add_service_errors(exc)
        except FleetError as exc:
            form.add_error(None, exc.message)
        else:
            model_admin.message_user(
                request, f"Resources of {agent.name} saved; the agent is being redeployed with them "
                         "(its state is kept).", messages.SUCCESS)
            return HttpResponseRedirect(_change_url(agent.pk))
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta, "original": agent,
               "title": f"Change the resources of {agent.name}", "form": form, "agent": agent,
               "running": agent.status == "running"}
    return TemplateResponse(request, "admin/agents/agent/resources.html", context)


def agent_model_view(model_admin, request, object_id):
    """The agent's model: choose a saved key and a model (as PUT /api/agents/:id/model), or
    return it to the platform default (as DELETE)."""
    agent = _agent(model_admin, request, object_id, change=True)
    principal = Principal(user=request.user)
    keys = usable_keys(principal=principal, workspace_ids=agent_workspace_ids(agent.pk))
    current = model_record(agent)
    initial = {"model_key": str(current["keyId"]) if current["source"] == "agent" else "",
               "model_name": current["name"] if current["source"] == "agent" else "",
               "model_fallbacks": ", ".join(current["fallbacks"]), "model_routing": current["modelRouting"]}
    form = AgentModelForm(request.POST or None, initial=initial, keys=keys)
    if request.method == "POST" and "use-default" in request.POST:
        agent_model_clear(agent=agent)
        model_admin.message_user(request, f"{agent.name} now takes the platform default model, if one is set.",
                                 messages.SUCCESS)
        return HttpResponseRedirect(_change_url(agent.pk))
    if request.method == "POST" and form.is_valid():
        try:
            value = model_value(form.cleaned_data)
            if form.cleaned_data.get("model_routing"):  # absent: unchanged, as the route does
                value["modelRouting"] = form.cleaned_data["model_routing"]
            model_set_from_body(principal=principal, agent=agent, value=value)
        except ValidationFailed as exc:
            form.add_service_errors(exc)
        except FleetError as exc:
            form.add_error(None, exc.message)
        else:
            model_admin.message_user(request, f"{agent.name} answers with {form.cleaned_data['model_name']} now"
                                     f"{' (once it runs)' if agent.status not in SERVING else ''}.", messages.SUCCESS)
            return HttpResponseRedirect(_change_url(agent.pk))
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta, "original": agent,
               "title": f"The model of {agent.name}", "form": form, "agent": agent, "current": current,
               "has_keys": bool(keys)}
    return TemplateResponse(request, "admin/agents/agent/model.html", context)


def agent_deploy_view(model_admin, request):
    """Deploy from the console: the deploy service with the operator as the caller, so the
    same validation, quota and events as POST /api/agents/deploy."""
    principal = Principal(user=request.user)
    targets = [(target_id, target_label(target_id)) for target_id in deployable_targets(principal)]
    # The workspaces the operator may share an agent into: editor or above, as the route asks.
    shareable = [pk for pk, role in workspace_roles(principal).items() if role >= Role.EDITOR]
    workspaces = Workspace.objects.filter(pk__in=shareable).order_by("name")
    form = DeployForm(request.POST or None, keys=usable_keys(principal=principal, workspace_ids=[]), targets=targets,
                      workspaces=workspaces)
    if request.method == "POST" and form.is_valid():
        deploy_request = DeployRequest(**form.request_values())
        workspace = form.chosen_workspace()
        try:
            if workspace is None:
                agent = agent_deploy(principal=principal, request=deploy_request)
            else:
                agent = agent_deploy_shared(principal=principal, request=deploy_request, workspace=workspace)
        except ValidationFailed as exc:
            form.add_service_errors(exc)
        except FleetError as exc:
            form.add_error(None, exc.message)
        else:
            shared = f", shared into {workspace.name}" if workspace else ""
            model_admin.message_user(request, f"{agent.name} is queued for deployment{shared}.", messages.SUCCESS)
            # A value the server changed says so, as the API's `adjusted` does.
            for field, change in resource_adjustments(deploy_request, agent).items():
                model_admin.message_user(request, f"{field}: {change['requested']} requested, {change['applied']} "
                                                  f"applied. {change['why']}", messages.WARNING)
            return HttpResponseRedirect(_change_url(agent.pk))
    context = {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
               "title": "Deploy an agent", "form": form, "add": True}
    return TemplateResponse(request, "admin/agents/agent/deploy.html", context)


def _error_response(exc: FleetError) -> JsonResponse:
    """A refusal as the API's error body and status (the reason as said to platform admins)."""
    fields = exc.fields if isinstance(exc, ValidationFailed) else None
    return JsonResponse(error_body(exc.message, exc.code, fields), status=status_of(exc))


def agent_logs(model_admin, request, object_id):
    """GET: the agent's latest lines as JSON, `{"status", "lines": [{ts, stream, line}]}`, or with
    `Accept: text/event-stream` followed live (the page's panel) through the logs services of
    GET /api/agents/:id/logs: the same query, limits, events and stream caps. A refusal (no
    workload, an engine down) is the API's error body and status."""
    if request.method != "GET":
        return HttpResponseNotAllowed(["GET"])
    agent = _agent(model_admin, request, object_id, change=False)
    try:
        if wants_event_stream(request):
            query = logs_query_from(request.GET, last_event_id=request.META.get("HTTP_LAST_EVENT_ID"))
            return follow_response(request, user=request.user, agent=agent, query=query)
        query = logs_query_from(request.GET)
        lines = agent_logs_list(agent=agent, tail=query.tail, since=query.since)
    except FleetError as exc:
        return _error_response(exc)
    return JsonResponse({"status": agent.status, "lines": [log_line_data(line) for line in lines]})


def agent_chat(model_admin, request, object_id):
    """POST `{message, sessionId?}`: a chat turn streamed as the API's events (the chat panel)."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    agent = _agent(model_admin, request, object_id, change=True)
    try:
        body = ChatIn(data=json.loads(request.body or b"{}"))
    except ValueError:
        return _error_response(ValidationFailed({"message": ["Send a JSON object."]}))
    if not body.is_valid():
        return _error_response(ValidationFailed({name: [str(m) for m in messages_]
                                                 for name, messages_ in body.errors.items()}))
    try:
        return chat_response(request, user=request.user, agent=agent, message=body.validated_data["message"],
                             session_id=body.validated_data.get("sessionId"))
    except FleetError as exc:
        return _error_response(exc)


def agent_open_ui(model_admin, request, object_id):
    """POST: into the agent's own UI through the gateway proxy, signed in as the operator."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    agent = _agent(model_admin, request, object_id, change=True)
    try:
        session = gateway_session_create(principal=Principal(user=request.user), agent=agent,
                                         secure=request.is_secure())
    except FleetError as exc:
        model_admin.message_user(request, f"Could not open {agent.name}'s UI: {exc.message}", messages.ERROR)
        return HttpResponseRedirect(_change_url(agent.pk))
    return HttpResponseRedirect(session.url)


def agent_progress(model_admin, request, object_id):
    """Where the deploy is (the page polls it while the agent deploys)."""
    agent = _agent(model_admin, request, object_id, change=False)
    steps = deploy_steps(agent.pk) if agent.status in IN_FLIGHT else []
    return JsonResponse({"status": agent.status, "last_error": agent.last_error,
                         "steps": [{"name": s.name, "label": s.label, "state": s.state} for s in steps]})


def agent_terminal(model_admin, request, object_id):
    """POST: a ticket for the signed-in operator to open the agent's terminal (the WebSocket of
    /api/agents/:id/terminal), as POST /api/agents/:id/terminal/session answers the API's callers:
    `{"url", "expiresAt"}`, or the API's error body and status."""
    if request.method != "POST":
        return HttpResponseNotAllowed(["POST"])
    agent = _agent(model_admin, request, object_id, change=True)
    principal = Principal(user=request.user)
    try:
        terminal_agent(principal, agent.pk)  # the same people as the API's: platform admins here
        ticket = terminal_ticket_issue(principal=principal, agent=agent, via=TerminalVia.CONSOLE,
                                       secure=request.is_secure(), host=request.get_host())
    except FleetError as exc:
        return JsonResponse(error_body(exc.message, exc.code), status=status_of(exc))
    return JsonResponse(TerminalTicketOut(ticket).data)
