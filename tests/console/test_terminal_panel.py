"""The agent page's terminal panel and the console view that mints its ticket: shown while the
agent runs, with xterm.js served from the console's own static files; the ticket is the API's
(the same checks, recorded as opened from the console); refusals are the API's error body.
In a real browser: test_terminal_browser.py."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from fleet.edge.tickets import ticket_redeem
from tests.agents.terminal.support import hold_terminals
from tests.factories.accounts import AdminFactory

pytestmark = pytest.mark.django_db


def _page(console, agent) -> str:
    return console.get(f"/admin/agents/agent/{agent.pk}/change/").content.decode()


def _ticket(console, agent):
    return console.post(f"/admin/agents/agent/{agent.pk}/terminal/")


def test_a_running_agents_page_has_the_terminal_and_xterm_from_the_consoles_own_files(console, tenancy):
    page = _page(console, tenancy.agent(status="running", container_id="abc"))

    assert 'id="agent-terminal-panel"' in page and 'id="agent-terminal-form"' in page
    for name in ("console/vendor/xterm/xterm.js", "console/vendor/xterm/addon-fit.js",
                 "console/vendor/xterm/xterm.css", "console/terminal.js"):
        assert f"/static/{name}" in page
        assert finders.find(name), name  # vendored, never from a CDN
    assert finders.find("console/vendor/xterm/LICENSE.xterm")


@pytest.mark.parametrize("fields", [{"status": "stopped"}, {"status": "running", "container_id": ""}])
def test_an_agent_without_a_running_workload_has_no_terminal(console, tenancy, fields):
    page = _page(console, tenancy.agent(**fields))
    assert 'id="agent-terminal-panel"' not in page and "xterm.js" not in page


def test_the_console_mints_the_operators_ticket_for_the_terminals_websocket(console, tenancy, platform_admin):
    agent = tenancy.agent(status="running", container_id="abc")

    response = _ticket(console, agent)

    assert response.status_code == 200, response.content
    url = urlsplit(response.json()["url"])
    assert (url.scheme, url.path) == ("ws", f"/api/agents/{agent.pk}/terminal") and response.json()["expiresAt"]
    claims = ticket_redeem(purpose="terminal", ticket=parse_qs(url.query)["ticket"][0])
    assert (claims["via"], claims["principal"]["user"]) == ("console", str(platform_admin.pk))


def test_refusals_are_the_apis_error_body(console, tenancy, platform_admin, settings):
    stopped = tenancy.agent(status="stopped", container_id="abc")
    response = _ticket(console, stopped)
    assert (response.status_code, response.json()["code"]) == (409, "agent_not_running")

    hold_terminals(platform_admin, settings.TERMINAL_LIMIT_PER_USER)
    response = _ticket(console, tenancy.agent(status="running", container_id="abc"))
    assert (response.status_code, response.json()["code"]) == (429, "too_many_streams")

    assert console.get(f"/admin/agents/agent/{stopped.pk}/terminal/").status_code == 405


def test_the_view_needs_the_consoles_sign_in_and_its_csrf_token(tenancy):
    agent = tenancy.agent(status="running", container_id="abc")
    assert Client().post(f"/admin/agents/agent/{agent.pk}/terminal/").status_code == 302  # to the sign-in

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(AdminFactory())
    assert strict.post(f"/admin/agents/agent/{agent.pk}/terminal/").status_code == 403
