"""Call one operation of one agent's runtime by hand and print its JSON answer.

    manage.py gateway_call 2b6f...-uuid handshake
    manage.py gateway_call 2b6f...-uuid usage '{"since": "2026-11-01"}'
    manage.py gateway_call 2b6f...-uuid config_patch '{"patch": {"update": {"channel": "beta"}}}'

METHOD is an operation of agents.gateway.RuntimeGateway, JSON its keyword arguments. A refusal
prints the reason and exits non-zero. The agent's token is never printed.
"""

from __future__ import annotations

import json
from datetime import date

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError

from agents.gateway import as_json, gateway_for
from agents.gateway.errors import scrub
from agents.models import Agent
from fleet.commands import RecordedCommand
from fleet.errors import FleetError

OPERATIONS = (
    "handshake", "health", "ready", "channels_status", "config_get", "config_patch", "login_start",
    "login_wait", "logout", "usage", "abort_runs", "send_message", "exec_policy_get", "exec_policy_set",
    "approvals_list", "approval_resolve",
)


def _arguments(method: str, raw: str | None) -> dict:
    try:
        arguments = json.loads(raw) if raw else {}
    except ValueError as exc:
        raise CommandError(f"JSON: {exc}") from None
    if not isinstance(arguments, dict):
        raise CommandError("JSON must be an object of keyword arguments, e.g. '{\"since\": \"2026-11-01\"}'.")
    if method == "usage":
        try:
            arguments["since"] = date.fromisoformat(arguments.get("since") or date.today().isoformat())
        except (TypeError, ValueError):
            raise CommandError("usage: since must be a date like 2026-11-01.") from None
    return arguments


class Command(RecordedCommand):
    one_transaction = False  # a call to a runtime, not a row of ours
    help = "Call one operation of an agent's runtime gateway and print the JSON result."
    # The system checks (agents.W001: how agents reach the web server) are migrate's and check's.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("agent_id")
        parser.add_argument("method", choices=OPERATIONS)
        parser.add_argument("arguments", nargs="?", metavar="JSON", help="keyword arguments as a JSON object")

    def handle(self, *args, agent_id: str, method: str, arguments: str | None = None, **options):
        keywords = _arguments(method, arguments)
        try:
            agent = Agent.objects.filter(pk=agent_id).first()
        except ValidationError:
            raise CommandError(f"{agent_id!r} is not an agent id.") from None
        if agent is None:
            raise CommandError(f"No agent has the id {agent_id}.")
        secret = agent.gateway_token if isinstance(agent.gateway_token, str) else None
        try:
            result = getattr(gateway_for(agent), method)(**keywords)
        except FleetError as exc:
            raise CommandError(f"{exc.message} ({exc.code})") from None
        except TypeError as exc:  # wrong keyword arguments for the operation
            raise CommandError(f"{method}: {scrub(exc, [secret])}") from None
        self.stdout.write(scrub(_dumps(result), [secret]))


def _dumps(result) -> str:
    return json.dumps(as_json(result), indent=2, sort_keys=True)
