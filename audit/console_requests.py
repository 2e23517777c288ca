"""The console's other writes: admin actions on a list (start, stop, revoke the selected...) and
the pages an app adds under /admin/ (the agent page's lifecycle buttons, resources, model). Each
POST there is one transaction with its row, as an API write is; the add, change and delete views
are left to ModelAdmin.log_* (audit.console), and the sign-in pages to Django's signals."""

from __future__ import annotations

import logging

from django.contrib import messages
from django.db import transaction
from django.http import HttpResponse
from kombu.exceptions import OperationalError as BrokerError

from fleet.errors import BrokerUnavailable

from .actors import actor_of_request
from .models import OK, Source
from .services import audit_record

logger = logging.getLogger(__name__)
ADMIN_PREFIX = "/admin/"
# Recorded elsewhere: ModelAdmin.log_* (audit.console) and the auth signals (audit.hooks).
LOGGED_ELSEWHERE = ("_add", "_change", "_delete", "_password_change")
SIGN_IN_PAGES = frozenset({"login", "logout", "admin-login", "password_change"})
NOT_CHANGES = frozenset({"agents_agent_chat"})  # a chat turn from the agent page: a conversation


def _recorded_here(request) -> bool:
    if request.method != "POST" or not request.path.startswith(ADMIN_PREFIX):
        return False
    match = request.resolver_match
    name = (match.url_name if match else "") or ""
    return bool(name) and name not in SIGN_IN_PAGES | NOT_CHANGES and not name.endswith(LOGGED_ELSEWHERE)


def _failed(request, response) -> str:
    if response.status_code >= 400:
        return f"http_{response.status_code}"
    storage = getattr(request, "_messages", None)
    if storage is None:
        return OK
    refused = any(message.level >= messages.ERROR for message in storage)
    storage.used = False  # read here, still shown on the next page
    return "error" if refused else OK


class ConsoleWriteMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not request.path.startswith(ADMIN_PREFIX) or request.method != "POST":
            return self.get_response(request)
        try:
            with transaction.atomic():
                response = self.get_response(request)
                if _recorded_here(request):
                    _record(request, response)
        except BrokerError as exc:
            # A job published when the write commits (fleet.api.writes says the same to an API
            # client as a 503): what the write stored is kept; the page says to try again.
            logger.warning("A job could not be published after the console's commit: %s", exc)
            return HttpResponse(BrokerUnavailable.default_message, status=503, content_type="text/plain")
        return response


def _record(request, response) -> None:
    match = request.resolver_match
    kwargs = match.kwargs if match else {}
    action = f"console.{match.url_name}"
    if "verb" in kwargs:
        action = f"{action}.{kwargs['verb']}"
    chosen = request.POST.get("action")
    selected = request.POST.getlist("_selected_action")
    if chosen:
        action = f"{action}.{chosen}"
    target = str(kwargs.get("object_id") or ",".join(selected))[:100]
    model = ".".join(match.url_name.split("_")[:2])  # agents_agent_act -> agents.agent
    audit_record(action=action, source=Source.CONSOLE, actor=actor_of_request(request),
                 result=_failed(request, response), target_type=model, target_id=target,
                 detail=sorted(name for name in request.POST if name not in ("csrfmiddlewaretoken", "action",
                                                                             "_selected_action", "index")))
