"""Live follows leave the web server to everyone: on the Procfile's own server (granian,
fleet/web.py) with its default two workers, two agent pages' log panels follow as console/agent.js
does while API requests are answered promptly, and each panel sees a line its container writes
meanwhile; twenty API follows at once leave /api/health prompt. A follow waits on the event loop
(fleet.edge) and holds no worker."""

from __future__ import annotations

import socket
import threading
import time
import uuid

import pytest
import requests
from django.conf import settings
from django.test import Client

from agents.backends.engine import backend_of
from fleet.models import StreamLease
from tests.factories.accounts import AdminFactory
from tests.factories.agents import place_on_engine
from tests.infra.docker import exec_in
from tests.infra.web_server import procfile_web_server
from tests.support import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker, pytest.mark.timeout(180)]

PROMPT_SECONDS = 1.5  # an API request with both pages open is answered within this
FOLLOWERS = 20


@pytest.fixture
def watched(tenancy, docker_settings):
    """Two running agents with real containers on the test engine, shared into the workspace."""
    agents = [place_on_engine(tenancy.agent(name=f"watched-{n}")) for n in range(2)]
    yield agents
    for agent in agents:
        backend_of(agent).remove(agent)


def _server_env(docker_engine_url: str, **extra: str) -> dict[str, str]:
    return {"DOCKER_HOST": docker_engine_url, "DOCKER_NETWORK_MODE": "host", "LOG_LEVEL": "WARNING", **extra}


def _write(docker_engine, agent, text: str) -> None:
    """A line of the workload's own output (PID 1's stdout)."""
    result = exec_in(docker_engine.containers.get(agent.container_id), ["sh", "-c", f"echo {text} > /proc/1/fd/1"])
    assert result.exit_code == 0, result.output


class Follow(threading.Thread):
    """A live follow read as an EventSource reads it, every chunk as it comes: an API caller's
    (a key) or an open agent page's log panel (the console's session cookie)."""

    def __init__(self, url: str, *, key: str | None = None, session_cookie: str | None = None):
        super().__init__(daemon=True)
        self.url = url
        self.headers = {"Accept": "text/event-stream", **({"X-Api-Key": key} if key else {})}
        self.cookies = {settings.SESSION_COOKIE_NAME: session_cookie} if session_cookie else {}
        self.chunks: list[tuple[float, bytes]] = []  # (when, chunk)
        self.error: BaseException | None = None
        self.response: requests.Response | None = None

    def run(self):
        try:
            with requests.get(self.url, stream=True, timeout=30, headers=self.headers,
                              cookies=self.cookies) as response:
                self.response = response
                assert response.status_code == 200, response.text
                for chunk in response.iter_content(chunk_size=None):
                    self.chunks.append((time.monotonic(), chunk))
        except BaseException as exc:  # raised in the test
            self.error = exc

    def leave(self) -> None:
        """Go away as a closed browser tab does: the connection drops mid-stream."""
        self.response.raw.connection.sock.shutdown(socket.SHUT_RDWR)

    def saw(self, text: str) -> bool:
        return text.encode() in b"".join(chunk for _, chunk in self.chunks)


def _console_cookie() -> str:
    client = Client()
    client.force_login(AdminFactory())
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def test_two_open_agent_pages_leave_the_default_workers_to_the_api(
        watched, tenancy, tmp_path, docker_engine, docker_engine_url):
    key = tenancy.key("agents:read")
    cookie = _console_cookie()
    markers = [f"fleet-panel-{uuid.uuid4().hex[:8]}" for _ in watched]
    with procfile_web_server(tmp_path, env=_server_env(docker_engine_url)) as server:
        panels = [Follow(f"{server}/admin/agents/agent/{agent.pk}/logs/?tail=200", session_cookie=cookie)
                  for agent in watched]
        for panel in panels:
            panel.start()
        wait_until(lambda: all(panel.chunks for panel in panels), timeout=20)
        api_seconds = []
        for round_ in range(8):
            if round_ == 2:
                for agent, marker in zip(watched, markers, strict=True):
                    _write(docker_engine, agent, marker)
            started = time.monotonic()
            response = requests.get(f"{server}/api/agents/{watched[round_ % 2].pk}", headers={"X-Api-Key": key},
                                    timeout=30)
            api_seconds.append(time.monotonic() - started)
            assert response.status_code == 200, response.text
            time.sleep(0.25)
        wait_until(lambda: all(panel.saw(marker) for panel, marker in zip(panels, markers, strict=True)), timeout=20)

    for panel, marker in zip(panels, markers, strict=True):
        assert panel.error is None or isinstance(panel.error, requests.RequestException), panel.error
        assert b"".join(c for _, c in panel.chunks).count(marker.encode()) == 1  # seen live, and once
    assert max(api_seconds) < PROMPT_SECONDS, api_seconds


def test_twenty_live_follows_leave_the_procfile_server_to_everyone(watched, tenancy, tmp_path, docker_engine,
                                                                  docker_engine_url):
    """Follows wait on the event loop (fleet.edge): twenty of them hold no worker, /api/health
    answers promptly meanwhile, and every follow still sees a line written while they run."""
    key = tenancy.key("agents:read")
    env = _server_env(docker_engine_url, LOGS_HEARTBEAT_SECONDS="1", STREAM_LIMIT_PER_USER="25")
    marker = f"fleet-follow-{uuid.uuid4().hex[:8]}"
    with procfile_web_server(tmp_path, env=env) as server:
        follows = [Follow(f"{server}/api/agents/{watched[n % 2].pk}/logs?tail=0", key=key) for n in range(FOLLOWERS)]
        for follow in follows:
            follow.start()
        wait_until(lambda: all(follow.chunks for follow in follows), timeout=30)  # every one being served
        health_seconds = []
        for _ in range(10):
            asked = time.monotonic()
            assert requests.get(f"{server}/api/health", timeout=30).status_code in (200, 503)
            health_seconds.append(time.monotonic() - asked)
            time.sleep(0.1)
        for agent in watched:
            _write(docker_engine, agent, marker)
        wait_until(lambda: all(follow.saw(marker) for follow in follows), timeout=30)

        for follow in follows:  # every viewer leaves at once: each stream ends, quietly
            follow.leave()
        wait_until(lambda: not StreamLease.objects.exists(), timeout=10)

    for follow in follows:
        assert follow.error is None or isinstance(follow.error, requests.RequestException), follow.error
    assert max(health_seconds) < PROMPT_SECONDS, health_seconds
    assert "Traceback" not in (tmp_path / "web.log").read_text()
