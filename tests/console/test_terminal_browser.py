"""The agent page's terminal in a real browser: Chromium (Playwright) against the Procfile's web
process (granian, fleet/web.py) on loopback, on a real Hermes container. The operator opens the
terminal (a ticket from the console, the WebSocket of /api/agents/:id/terminal, xterm.js from the
console's own static files), types `id -u` and reads the runtime's user back, closes it, and the
session is recorded as opened from the console. No page logs a console error."""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password

from agents.models import TerminalSession
from tests.console.test_browser import ConsoleErrors, _shot, browser, server, sign_in  # noqa: F401 - fixtures
from tests.factories.accounts import DEFAULT_PASSWORD, AdminFactory
from tests.infra.runtimes import RUNTIME_UID
from tests.support import in_thread, wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker, pytest.mark.runtime,
              pytest.mark.browser, pytest.mark.timeout(240)]
# Shells in the runtime's container, which they leave as they found it: the session's runtimes serve.
SHARES_RUNTIMES = True

STATE = "document.getElementById('agent-terminal-state').textContent"
SCREEN = "document.querySelector('#agent-terminal .xterm-rows').textContent"


@pytest.fixture
def world(transactional_db, hermes_runtime, docker_settings):
    """Made before the browser starts (Playwright's sync API runs an event loop in this thread)."""
    admin = AdminFactory(email="terminal-operator@example.com")
    admin.password = make_password(DEFAULT_PASSWORD, hasher=PBKDF2PasswordHasher())  # the server's hasher
    admin.save(update_fields=["password"])
    container = hermes_runtime.container
    agent = hermes_runtime.agent(name="hermes-shell", owner=admin, container_id=container.id,
                                 container_name=container.name)
    return admin, agent


def test_an_operator_opens_a_terminal_types_id_u_and_closes_it(world, server, browser):  # noqa: F811
    admin, agent = world
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = ConsoleErrors(page)
    page.set_default_timeout(20_000)
    sign_in(page, server, admin.email)

    page.goto(f"{server}/admin/agents/agent/{agent.pk}/change/")
    page.click("#agent-terminal-open")
    page.wait_for_function(f"{STATE} === 'connected'")
    page.click("#agent-terminal")
    page.keyboard.type('echo "u=$(id -u)="')
    page.keyboard.press("Enter")
    page.wait_for_function(f"{SCREEN}.includes('u={RUNTIME_UID}=')")
    _shot(page, "10-agent-terminal")

    page.click("#agent-terminal-close")
    page.wait_for_function(f"{STATE} === 'closed'")
    page.close()
    assert errors.errors == []

    def recorded():
        return list(TerminalSession.objects.filter(agent_id=agent.pk).values_list("via", "user_id", "end_reason"))

    # The database from another thread: Playwright's loop runs in this one.
    wait_until(lambda: in_thread(recorded).result() == [("console", admin.pk, "closed")])
