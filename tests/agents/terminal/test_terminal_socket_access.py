"""Who may open WebSocket /api/agents/:id/terminal, and what the agent must be: every refusal
comes before the socket is accepted and before any engine is asked, with its close code
(docs/api.md, "Terminal"). The shell itself is test_terminal_real.py's."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import pytest

from accounts.tokens import session_token_issue, sessions_revoke
from agents.terminal import tickets
from tests.agents.terminal.support import bearer, hold_terminals, path_of, terminal_path
from tests.infra.asgi import edge_socket
from tests.infra.web_server import procfile_web_server
from workspaces.models import Membership
from workspaces.roles import Role

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent(tenancy):
    return tenancy.agent(status="running", container_id="abc")


def refusal(path: str, headers: dict | None = None) -> tuple[int, str]:
    with edge_socket(path, headers=headers) as socket:
        assert not socket.accepted
        return socket.close_code, socket.close_reason


def ticket_url(tenancy, caller: str, agent) -> str:
    response = tenancy.client(caller).post(f"/api/agents/{agent.pk}/terminal/session")
    assert response.status_code == 200, response.content
    return path_of(response.json()["url"])


def test_no_credential_is_4401(agent):
    assert refusal(terminal_path(agent)) == (4401, "not_authenticated")


def test_a_key_even_one_that_operates_the_agent_is_4403_session_required(tenancy, agent):
    key = tenancy.key("agents:read", "agents:write")
    assert refusal(terminal_path(agent), {"x-api-key": key}) == (4403, "session_required")


@pytest.mark.parametrize("caller", ["viewer", "editor"])
def test_viewers_and_editors_are_4403(tenancy, agent, caller):
    assert refusal(terminal_path(agent), bearer(getattr(tenancy, caller))) == (4403, "permission_denied")


def test_a_user_of_another_workspace_is_4404_as_for_a_missing_agent(tenancy, agent):
    assert refusal(terminal_path(agent), bearer(tenancy.outsider)) == (4404, "not_found")
    assert refusal("/api/agents/not-a-uuid/terminal", bearer(tenancy.agent_owner)) == (4404, "not_found")


def test_a_revoked_session_is_4401(tenancy, agent):
    headers = bearer(tenancy.agent_owner)
    sessions_revoke(user=tenancy.agent_owner)
    assert refusal(terminal_path(agent), headers) == (4401, "invalid_credentials")


def test_the_cookie_of_a_foreign_origin_is_4403(tenancy, agent):
    cookie = f"service_auth={session_token_issue(user=tenancy.agent_owner)}"
    assert refusal(terminal_path(agent), {"cookie": cookie, "origin": "https://evil.example"}) == (4403, "csrf_failed")


def test_a_ticket_used_twice_is_4401(tenancy, agent):
    path = ticket_url(tenancy, "agent_owner", agent)
    with edge_socket(path):  # the first use spends it (this agent's container is not real: refused later)
        pass
    assert refusal(path) == (4401, "invalid_credentials")


def test_an_expired_ticket_is_4401(tenancy, agent, monkeypatch):
    monkeypatch.setattr(tickets, "TICKET_SECONDS", 1)
    path = ticket_url(tenancy, "agent_owner", agent)
    time.sleep(1.5)
    assert refusal(path) == (4401, "invalid_credentials")


def test_a_ticket_for_another_agent_is_4401(tenancy, agent):
    other = tenancy.agent(status="running", container_id="def")
    path = ticket_url(tenancy, "agent_owner", other).replace(str(other.pk), str(agent.pk))
    assert refusal(path) == (4401, "invalid_credentials")


def test_a_ticket_is_checked_against_access_as_it_is_now(tenancy, agent):
    path = ticket_url(tenancy, "admin", agent)
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.admin).update(role=Role.EDITOR.label)
    assert refusal(path) == (4403, "permission_denied")


def test_a_ticket_of_a_session_revoked_since_is_4401(tenancy, agent):
    path = ticket_url(tenancy, "agent_owner", agent)
    sessions_revoke(user=tenancy.agent_owner)
    assert refusal(path) == (4401, "invalid_credentials")


def test_a_stopped_agent_is_4409(tenancy):
    stopped = tenancy.agent(status="stopped", container_id="abc")
    assert refusal(terminal_path(stopped), bearer(tenancy.agent_owner)) == (4409, "agent_not_running")


def test_a_proxmox_agent_is_4409_unsupported(tenancy, settings):
    settings.PROXMOX_URL = "https://pve.invalid:8006"
    agent = tenancy.agent(status="running", container_id="pve/101", deploy_target="proxmox",
                          execution_target_id="proxmox")
    assert refusal(terminal_path(agent), bearer(tenancy.agent_owner)) == (4409, "unsupported")


def test_one_terminal_over_the_users_limit_is_4429(tenancy, agent, settings):
    hold_terminals(tenancy.agent_owner, settings.TERMINAL_LIMIT_PER_USER)
    assert refusal(terminal_path(agent), bearer(tenancy.agent_owner)) == (4429, "too_many_streams")


def test_a_server_with_the_denial_response_answers_the_refusal_over_http(tenancy, agent):
    key = tenancy.key("agents:read", "agents:write")
    with edge_socket(terminal_path(agent), headers={"x-api-key": key},
                     extensions={"websocket.http.response": {}}) as socket:
        assert not socket.accepted and socket.close_code == 403
        assert json.loads(socket.denial_body)["code"] == "session_required"



def test_the_procfiles_server_answers_a_refused_handshake_with_the_apis_status_and_body(tenancy, agent, tmp_path):
    """granian offers ASGI's denial response: a program sees why it was refused."""
    upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
               "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}

    async def handshake(url: str, headers: dict) -> tuple[int, dict]:
        async with aiohttp.ClientSession() as session, session.get(url, headers={**upgrade, **headers}) as answer:
            return answer.status, await answer.json(content_type=None)

    with procfile_web_server(tmp_path, env={"LOG_LEVEL": "WARNING"}) as base:
        url = base + terminal_path(agent)
        status, body = asyncio.run(handshake(url, {}))
        assert (status, body["code"]) == (401, "not_authenticated")
        status, body = asyncio.run(handshake(url, {"X-Api-Key": tenancy.key("agents:read", "agents:write")}))
        assert (status, body["code"]) == (403, "session_required")
