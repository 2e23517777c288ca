"""The real OpenClaw Control UI in a real browser (Debian's Chromium through Playwright), through
the gateway proxy of the Procfile's own web process: it loads on the agent's own origin, its
WebSocket connects and it talks to the agent, while the browser never receives the agent's token
(every response and frame is searched) nor sends Fleet's own cookies to that origin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from accounts.tokens import session_token_issue
from tests.infra.fake_model import ANSWER
from tests.infra.web_server import procfile_web_server
from tests.support import need_service

pytestmark = [pytest.mark.runtime, pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.timeout(240)]
# Reads what the runtimes hold and adds conversations, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True

ROOT = Path(__file__).resolve().parents[3]
SCREENSHOTS = ROOT / "var" / "ci" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLEET_COOKIES = ("service_auth", "sessionid", "csrftoken")


class Seen:
    """Everything the agent's origin sent the page, and every request the page made to it."""

    def __init__(self, page, origin: str):
        self.bodies: list[str] = []
        self.frames: list[str] = []
        self.cookies_sent: list[str] = []
        self.errors: list[str] = []
        page.on("response", self._response)
        page.on("request", lambda request: request.url.startswith(origin) and self.cookies_sent.append(
            request.all_headers().get("cookie", "")))
        page.on("websocket", lambda socket: socket.on("framereceived", lambda frame: self.frames.append(
            frame if isinstance(frame, str) else frame.decode(errors="replace"))))
        page.on("pageerror", lambda error: self.errors.append(str(error)))

    def _response(self, response):
        try:
            self.bodies.append(response.body().decode(errors="replace"))
        except Exception:  # a redirect has no body to read
            pass


def test_the_control_ui_works_through_the_proxy_and_never_holds_the_token(openclaw_runtime, tenancy, tmp_path,
                                                                           docker_engine_url):
    need_service(Path(CHROMIUM).exists(), f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    agent = openclaw_runtime.agent(owner=tenancy.agent_owner, name="control-ui")
    session = session_token_issue(user=tenancy.agent_owner)
    env = {"DOCKER_HOST": docker_engine_url, "DOCKER_NETWORK_MODE": "host", "LOG_LEVEL": "WARNING"}
    with procfile_web_server(tmp_path, env=env) as server:
        fleet_origin = server.replace("127.0.0.1", "localhost")
        link = requests.post(f"{server}/api/agents/{agent.pk}/gateway/session",
                             headers={"Authorization": f"Bearer {session}"}, timeout=30).json()["url"]
        agent_origin = link.split("/__fleet__")[0]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
            try:
                context = browser.new_context()
                # Signed into Fleet itself, as a user of the console or the API would be.
                context.add_cookies([{"name": "service_auth", "value": session, "url": fleet_origin},
                                     {"name": "sessionid", "value": "console-session", "url": fleet_origin}])
                page = context.new_page()
                seen = Seen(page, agent_origin)
                page.goto(link)
                composer = page.get_by_placeholder("Message Assistant")
                composer.wait_for(timeout=60_000)
                composer.fill("Hello through Fleet")
                composer.press("Enter")
                page.get_by_text(ANSWER).first.wait_for(timeout=60_000)
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / "proxy-openclaw-control-ui.png"), full_page=True)
                assert "Gateway unreachable" not in page.inner_text("body")
            finally:
                browser.close()

    assert seen.frames, "the UI's WebSocket received nothing"
    hello = next(json.loads(f) for f in seen.frames if '"hello-ok"' in f)
    assert hello["ok"] and "deviceToken" not in json.dumps(hello)
    everything = seen.bodies + seen.frames
    assert not [text for text in everything if agent.gateway_token in text]
    assert seen.cookies_sent and not [c for c in seen.cookies_sent for name in FLEET_COOKIES if f"{name}=" in c]
    assert seen.errors == []
