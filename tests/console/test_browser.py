"""The console in a real browser: Playwright driving Debian's Chromium against the Procfile's web
process itself (granian through fleet/web.py, its default two workers) on loopback, over the test
database, with a real Hermes container.

Signs in; `/` and every link of the console's sidebar (console/navigation.py, as it stands when
the test runs) render; the dashboard renders with data; the agent page shows its charts and its
logs live (a line the container writes now appears, through the panel's follow), its chat panel
answers (the fake model through the real runtime); its Stop
button (confirmed) stops the real container and the status changes; an alert rule, a workspace
API key (shown once), a budget in dollars, a channel, an integration and a deploy into a
workspace are submitted through their forms; no page logs a console error. And the first hour
on a fresh database: sign in at /admin/login/, deploy a Hermes agent from the console (a real
worker provisions it), see it running with its logs, stop it. A screenshot of each page is kept under
var/ci/screenshots/ (CI keeps var/ci as artifacts).
"""

from __future__ import annotations

import shutil
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher, make_password
from django.test import RequestFactory
from django.utils import timezone
from django.utils.text import slugify

from agents.services.engine_probe import engines_probe
from agents.usage.store import spend_rollups_add
from console.navigation import sidebar
from fleet.events import emit
from tests.agents.runtimes.support import runtime_image
from tests.factories.accounts import DEFAULT_PASSWORD, AdminFactory
from tests.factories.agents import AgentFactory, make_budget, make_samples
from tests.factories.alerts import make_rule
from tests.factories.workspaces import WorkspaceFactory
from tests.infra.docker import exec_in
from tests.infra.web_server import procfile_web_server
from tests.support import need_service

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker, pytest.mark.runtime,
              pytest.mark.browser, pytest.mark.timeout(240)]

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "var" / "ci" / "screenshots"
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def server(transactional_db, tmp_path, docker_engine_url):
    """The Procfile's web process on loopback over the test database and the test engine, with
    its default worker count: the agent page's log panel follows on the event loop, holding none."""
    env = {"DOCKER_HOST": docker_engine_url, "DOCKER_NETWORK_MODE": "host", "LOG_LEVEL": "WARNING"}
    with procfile_web_server(tmp_path, env=env) as url:
        yield url


@pytest.fixture
def browser():
    need_service(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield chromium
        finally:
            chromium.close()


class ConsoleErrors:
    """Every console error and uncaught exception of every page, with the page it came from."""

    def __init__(self, page):
        self.errors: list[str] = []
        page.on("console", lambda message: message.type == "error" and self.errors.append(
            f"{page.url}: {message.text}"))
        page.on("pageerror", lambda error: self.errors.append(f"{page.url}: {error}"))


def _shot(page, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def sidebar_links(admin) -> list[tuple[str, str]]:
    """(title, path) of every link the console's sidebar shows this admin, in its order."""
    request = RequestFactory().get("/admin/")
    request.user = admin
    links = []
    for group in sidebar(request):
        for item in group.get("items", []):
            permission = item.get("permission")
            if permission is None or permission(request):
                links.append((item["title"], str(item["link"])))
    return links


@pytest.fixture
def world(transactional_db, hermes_runtime, docker_settings):
    """Made before the browser starts: Playwright's sync API runs an event loop in this thread,
    where Django refuses database calls."""
    admin = AdminFactory(email="operator@example.com")
    # The server hashes with production's hashers, not the suite's fast one.
    admin.password = make_password(DEFAULT_PASSWORD, hasher=PBKDF2PasswordHasher())
    admin.save(update_fields=["password"])
    container = hermes_runtime.container
    agent = hermes_runtime.agent(name="hermes-live", owner=admin, container_id=container.id,
                                 container_name=container.name)
    make_samples(agent, start=timezone.now() - timedelta(minutes=20), count=60, every=timedelta(seconds=20))
    make_budget(agent, period="monthly", limit_usd=25)
    spend_rollups_add(agent_id=agent.pk, spend={timezone.now().date(): 3_250_000})
    broken = AgentFactory(name="needs-a-look", owner=admin, status="error", container_id="",
                          last_error="The runtime did not become ready within 120 s.")
    emit("agent.error", message="needs-a-look could not start", agent=broken)
    workspace = WorkspaceFactory(name="Ops", owner=admin)
    stopped = AgentFactory(name="openclaw-stopped", owner=admin, runtime_family="openclaw", status="stopped",
                           container_id="")
    make_rule(workspace=workspace, channels=[{"type": "email", "to": ["ops@example.com"]}], name="Errors to ops")
    engines_probe()  # what beat does every 30 s: the dashboard shows the stored result
    return admin, agent, sidebar_links(admin), workspace, stopped


def test_the_console_in_a_real_browser(world, server, browser, docker_engine):
    admin, agent, links, workspace, openclaw_stopped = world
    shutil.rmtree(SCREENSHOTS, ignore_errors=True)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = ConsoleErrors(page)
    page.set_default_timeout(20_000)

    # `/`, the landing page, before signing in.
    page.goto(f"{server}/")
    assert page.locator("a[href='/admin/']").is_visible()
    _shot(page, "00-home")

    # Sign in.
    sign_in(page, server, admin.email, shot="01-sign-in")

    # The dashboard, with data.
    assert page.locator("#panel-agents").inner_text().startswith("Agents")
    assert "needs-a-look" in page.locator("#panel-attention").inner_text()
    assert "needs-a-look could not start" in page.locator("#panel-events").inner_text()
    assert "ok" in page.locator("#panel-targets").inner_text()  # the test engine answered the probe
    assert "hermes-live" in page.locator("#panel-top-spenders").inner_text()
    _shot(page, "02-dashboard")

    # Every link of the sidebar, from the sidebar itself: each page renders (no console error).
    assert len(links) >= 9
    for number, (title, path) in enumerate(links, start=1):
        page.goto(f"{server}/admin/")
        page.locator(f"a[href='{path}']").first.click()
        page.wait_for_url(f"{server}{path}")
        assert page.locator("#content, main").first.is_visible(), title
        assert "Server Error" not in page.title() and "Page not found" not in page.title(), (title, page.title())
        _shot(page, f"02-sidebar-{number:02d}-{slugify(title)}")
    assert "Errors to ops" in _page_text(page, f"{server}/admin/alerts/alertrule/")
    assert "hermes-live" in _page_text(page, f"{server}/admin/agents/budget/")

    # The agents list shows the reason.
    page.goto(f"{server}/admin/agents/agent/")
    assert "did not become ready" in page.locator("#result_list").inner_text()
    _shot(page, "03-agents")

    # The agent page: charts, and the container's logs streaming live.
    page.goto(f"{server}/admin/agents/agent/{agent.pk}/change/")
    assert page.locator("#agent-status").inner_text() == "running"
    assert page.locator("svg.agent-stats-chart").count() == 4
    assert page.locator("#agent-charts polyline").count() >= 4
    page.wait_for_function("document.querySelectorAll('#agent-logs .fleet-log-line').length > 0")
    marker = f"fleet-console-{uuid.uuid4().hex[:8]}"
    result = exec_in(docker_engine.containers.get(agent.container_id),
        ["sh", "-c", f"echo {marker} > /proc/1/fd/1"])
    assert result.exit_code == 0, result.output
    page.wait_for_function(f"document.getElementById('agent-logs').textContent.includes('{marker}')")
    assert page.locator("#agent-logs-state").inner_text() == "live"
    shown = page.locator("#agent-logs .fleet-log-line").all_inner_texts()
    assert sum(marker in line for line in shown) == 1, shown

    # Talk to it: the chat panel streams the turn from the real runtime.
    page.fill("#agent-chat-message", "Hello from the console")
    page.click("#agent-chat-send")
    page.wait_for_function("document.getElementById('agent-chat-log').textContent.includes('The fake model answers.')")
    page.wait_for_function("document.getElementById('agent-chat-state').textContent.includes('tokens in')")
    _shot(page, "04-agent")

    # Another range of the charts.
    page.click(".fleet-ranges >> text=15m")
    page.wait_for_url("**/change/?range=15m")
    assert "last 15 minutes" in page.locator("#agent-charts h2").inner_text()

    # Stop (a destructive button: it asks first) stops the real container.
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#agent-stop")
    page.wait_for_selector("#agent-status.fleet-status-stopped")
    assert "hermes-live was stopped." in page.content()
    assert docker_engine.containers.get(agent.container_id).status == "exited"
    _shot(page, "05-agent-stopped")

    # Change resources (read-only on the form; this page redeploys).
    page.click("#agent-resources")
    assert "redeploys hermes-live" in page.locator("#agent-resources-form").inner_text()
    _shot(page, "06-resources")

    # The deploy form, and the other admins on the theme.
    page.goto(f"{server}/admin/agents/agent/add/")
    assert page.locator("#agent-deploy-form").is_visible()
    _shot(page, "07-deploy")
    page.goto(f"{server}/admin/accounts/user/{admin.pk}/change/")
    assert page.locator("input[name='email']").input_value() == admin.email
    _shot(page, "08-user")
    page.goto(f"{server}/admin/workspaces/workspace/")
    _shot(page, "09-workspaces")

    # What the API writes, written in the console: each form submitted for real.
    page.goto(f"{server}/admin/alerts/alertrule/add/")
    page.fill("#id_name", "Stops to ops")
    page.select_option("#id_workspace", label="Ops")  # by name
    page.fill("#id_event_pattern", "agent.stopped")
    page.fill("#id_channels", '[{"type": "email", "to": ["ops@example.com"]}]')
    _shot(page, "10-alert-rule-form")
    page.locator('button[name="_save"]').first.click()
    page.wait_for_url(f"{server}/admin/alerts/alertrule/")
    assert "Stops to ops" in page.locator("#result_list").inner_text()

    page.goto(f"{server}/admin/workspaces/apikey/add/")
    page.select_option("#id_workspace", label="Ops")
    page.fill("#id_name", "ci-deployer")
    page.check("input[name='scopes'][value='agents:read']")
    page.locator('button[name="_save"]').first.click()
    issued = page.locator("#api-key-value").inner_text()
    assert len(issued) > 20 and "never shows it again" in page.locator("#api-key-issued").inner_text()
    _shot(page, "11-api-key-issued")
    page.goto(f"{server}/admin/workspaces/apikey/")
    assert "ci-deployer" in page.locator("#result_list").inner_text() and issued not in page.content()

    page.goto(f"{server}/admin/agents/budget/add/")
    page.fill("#id_agent", str(agent.pk))
    page.select_option("#id_period", "daily")
    page.fill("#id_limit_usd", "7.25")
    page.locator('button[name="_save"]').first.click()
    page.wait_for_url(f"{server}/admin/agents/budget/")
    assert "7.25" in page.locator("#result_list").inner_text()

    # A stopped OpenClaw agent's channel (stored, pushed at its start) and an integration: their
    # secrets never come back.
    _save_a_secret(page, f"{server}/admin/channels/runtimechannel/",
                   {"#id_agent": str(openclaw_stopped.pk), "#id_type": "telegram",
                    "#id_config": '{"botToken": "123456:AAConsoleBrowserToken_0123456789"}'},
                   secret="AAConsoleBrowserToken")
    _save_a_secret(page, f"{server}/admin/integrations/integration/",
                   {"#id_agent": str(openclaw_stopped.pk), "#id_provider": "github",
                    "#id_config": '{"token": "ghp_consoleBrowserToken0123"}'},
                   secret="consoleBrowserToken")
    _shot(page, "12-integration")

    # Deploy into a workspace: queued (no worker serves this test) and shared into Ops.
    page.goto(f"{server}/admin/agents/agent/add/")
    page.fill("#id_name", "deployed-from-console")
    page.select_option("#id_runtime_family", "hermes")
    page.select_option("#id_workspace", str(workspace.pk))
    page.click("#deploy-submit")
    page.wait_for_url("**/change/")
    assert "deployed-from-console is queued for deployment, shared into Ops." in page.content()
    _shot(page, "13-deployed-into-a-workspace")

    page.close()
    assert errors.errors == []


def sign_in(page, server: str, email: str, *, shot: str | None = None) -> None:
    """Sign in at /admin/login/ as docs/console.md says; the console lands on the dashboard (not a
    404 for /accounts/profile/)."""
    page.goto(f"{server}/admin/login/")
    if shot:
        _shot(page, shot)
    page.fill('input[name="username"]', email)
    page.fill('input[name="password"]', DEFAULT_PASSWORD)
    page.click('button[type="submit"]')
    page.wait_for_url(f"{server}/admin/")


def _save_a_secret(page, changelist: str, fields: dict[str, str], *, secret: str) -> None:
    """Add a row through its form; its change page reads the secret back as [REDACTED] only."""
    page.goto(f"{changelist}add/")
    for selector, value in fields.items():
        page.fill(selector, value)
    page.locator('button[name="_save"]').first.click()
    page.wait_for_url(changelist)
    page.locator("#result_list a[href*='/change/']").first.click()
    assert "[REDACTED]" in page.locator("#id_config").input_value()
    assert secret not in page.content()


def _page_text(page, url: str) -> str:
    page.goto(url)
    return page.locator("body").inner_text()


@pytest.fixture
def first_hour(transactional_db, docker_settings, docker_engine, celery_worker_live):
    """A fresh installation: one platform admin and nothing else; a real worker deploys onto the
    test engine with the real Hermes image."""
    docker_settings.AGENT_IMAGE_HERMES = runtime_image(docker_engine, "hermes")
    docker_settings.DOCKER_READ_ONLY_ROOTFS = True  # the real images run on a read-only root
    admin = AdminFactory(email="newcomer@example.com")
    admin.password = make_password(DEFAULT_PASSWORD, hasher=PBKDF2PasswordHasher())
    admin.save(update_fields=["password"])
    return admin


def test_the_first_hour_in_a_real_browser(first_hour, server, browser, docker_engine):
    """Sign in where docs/console.md says, deploy from the console, see it running and its logs,
    stop it: on a fresh database, as a newcomer would."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors = ConsoleErrors(page)
    page.set_default_timeout(20_000)

    sign_in(page, server, first_hour.email)  # at /admin/login/: lands on the dashboard

    page.goto(f"{server}/admin/agents/agent/add/")
    page.fill("#id_name", "first-hermes")
    page.select_option("#id_runtime_family", "hermes")
    page.fill("#id_ram_mb", "512")
    page.click("#deploy-submit")
    page.wait_for_url("**/change/")
    assert "first-hermes is queued for deployment." in page.content()
    # The page shows the deploy's steps and reloads itself once the deploy has ended.
    page.wait_for_selector("#agent-status.fleet-status-running", timeout=120_000)
    page.wait_for_function("document.querySelectorAll('#agent-logs .fleet-log-line').length > 0")
    _shot(page, "20-first-hour-running")

    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#agent-stop")
    page.wait_for_selector("#agent-status.fleet-status-stopped")
    assert "first-hermes was stopped." in page.content()
    _shot(page, "21-first-hour-stopped")
    page.close()
    assert errors.errors == []
