"""POST /api/agents/:id/terminal/session: the ws(s) URL with a single-use ticket a browser opens
the agent's terminal with, and what it refuses beforehand as the WebSocket would (the access of
every caller is also the authorization matrix's)."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.utils import timezone

from agents.backends.base import WorkloadTerminal
from agents.backends.proxmox import ProxmoxBackend
from fleet.edge.tickets import ticket_redeem
from tests.agents.terminal.support import hold_terminals

pytestmark = pytest.mark.django_db


def _post(tenancy, caller: str, agent, **extra):
    return tenancy.client(caller).post(f"/api/agents/{agent.pk}/terminal/session", **extra)


@pytest.mark.parametrize("caller", ["agent_owner", "owner", "admin", "platform_admin"])
def test_the_owner_a_workspace_admin_or_owner_and_a_platform_admin_get_a_url_with_a_ticket(tenancy, caller):
    agent = tenancy.agent(status="running", container_id="abc")

    response = _post(tenancy, caller, agent)

    assert response.status_code == 200, response.content
    url = urlsplit(response.json()["url"])
    assert (url.scheme, url.netloc, url.path) == ("ws", "testserver", f"/api/agents/{agent.pk}/terminal")
    ticket = parse_qs(url.query)["ticket"][0]
    expires = timezone.datetime.fromisoformat(response.json()["expiresAt"].replace("Z", "+00:00"))
    assert timedelta(seconds=55) < expires - timezone.now() <= timedelta(seconds=60)
    claims = ticket_redeem(purpose="terminal", ticket=ticket)
    assert claims["agent"] == str(agent.pk) and claims["via"] == "api"
    assert claims["principal"]["user"] == str(getattr(tenancy, caller).pk)
    assert ticket_redeem(purpose="terminal", ticket=ticket) is None  # single use


def test_a_secure_request_gets_a_wss_url(tenancy):
    agent = tenancy.agent(status="running", container_id="abc")
    assert _post(tenancy, "agent_owner", agent, secure=True).json()["url"].startswith("wss://testserver/")


@pytest.mark.parametrize(("caller", "status", "code"), [
    ("anonymous", 401, "not_authenticated"),
    ("key:agents:read,agents:write", 403, "session_required"),  # even a key that operates the agent
    ("viewer", 403, "permission_denied"),
    ("editor", 403, "permission_denied"),
    ("outsider", 404, "not_found"),
    ("other-key", 403, "session_required"),
])
def test_keys_viewers_editors_and_outsiders_are_refused(tenancy, caller, status, code):
    agent = tenancy.agent(status="running", container_id="abc")

    response = _post(tenancy, caller, agent)

    assert (response.status_code, response.json()["code"]) == (status, code)


def test_a_stopped_agent_is_409_agent_not_running(tenancy):
    response = _post(tenancy, "agent_owner", tenancy.agent(status="stopped", container_id="abc"))
    assert (response.status_code, response.json()["code"]) == (409, "agent_not_running")


def test_an_agent_without_a_workload_is_409_no_container(tenancy):
    response = _post(tenancy, "agent_owner", tenancy.agent(status="running", container_id=""))
    assert (response.status_code, response.json()["code"]) == (409, "no_container")


def test_a_proxmox_agent_is_409_unsupported(tenancy, settings):
    settings.PROXMOX_URL = "https://pve.invalid:8006"  # configured; never called
    agent = tenancy.agent(status="running", container_id="pve/101", deploy_target="proxmox",
                          execution_target_id="proxmox")

    response = _post(tenancy, "agent_owner", agent)

    assert (response.status_code, response.json()["code"]) == (409, "unsupported")
    assert not isinstance(ProxmoxBackend(), WorkloadTerminal)  # Proxmox's API runs no command in a container


def test_an_agent_whose_target_is_gone_is_502(tenancy):
    agent = tenancy.agent(status="running", container_id="ns/x", deploy_target="k8s",
                          execution_target_id="k8s:00000000-0000-0000-0000-000000000000")
    response = _post(tenancy, "agent_owner", agent)
    assert (response.status_code, response.json()["code"]) == (502, "daemon_unreachable")


def test_a_user_holding_every_terminal_allowed_gets_429(tenancy, settings):
    settings.TERMINAL_LIMIT_PER_USER = 2
    hold_terminals(tenancy.agent_owner, 2)

    response = _post(tenancy, "agent_owner", tenancy.agent(status="running", container_id="abc"))

    assert (response.status_code, response.json()["code"]) == (429, "too_many_streams")
