"""Open agent pages leave the web server to everyone: on the Procfile's own server (granian,
fleet/web.py) with its default two workers, two agent pages' log panels poll as console/agent.js
does (the last 200 lines, then every 2 s the lines since the last one) while API requests are
answered promptly, and each panel sees a line its container writes meanwhile.

By contrast, and as docs/api.md says, the API's live follow (`Accept: text/event-stream`) holds a
worker for as long as it lasts: under gunicorn's sync workers (the alternative docs/configuration.md
describes) two follows leave none for anyone else until one ends."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter

import pytest
import requests
from django.conf import settings
from django.test import Client

from agents.services.engine import backend_of
from tests.factories.accounts import AdminFactory
from tests.factories.agents import place_on_engine
from tests.infra.web_server import gunicorn_server, procfile_web_server
from tests.support import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.docker, pytest.mark.timeout(180)]

POLL_SECONDS = 2.0  # console/agent.js's POLL_MS
PROMPT_SECONDS = 1.5  # an API request with both pages open is answered within this
FOLLOW_SECONDS = 8  # LOGS_FOLLOW_SECONDS of the follow test's server


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
    result = docker_engine.containers.get(agent.container_id).exec_run(["sh", "-c", f"echo {text} > /proc/1/fd/1"])
    assert result.exit_code == 0, result.output


class LogPanel(threading.Thread):
    """One open agent page's log panel, asking as console/agent.js does until told to stop."""

    def __init__(self, url: str, session_cookie: str, stop: threading.Event):
        super().__init__(daemon=True)
        self.url, self.stop = url, stop
        self.http = requests.Session()
        self.http.cookies.set(settings.SESSION_COOKIE_NAME, session_cookie)
        self.answers: list[tuple[int, float]] = []  # (status, seconds) of each request
        self.lines: list[str] = []  # what the panel shows
        self.last_ts: str | None = None
        self.shown_at_last_ts: Counter = Counter()
        self.error: BaseException | None = None

    def run(self):
        try:
            while not self.stop.is_set():
                query = {"tail": 200} if self.last_ts is None else {"tail": 1000, "since": self.last_ts}
                started = time.monotonic()
                response = self.http.get(self.url, params=query, timeout=30, allow_redirects=False)
                self.answers.append((response.status_code, time.monotonic() - started))
                if response.status_code == 200:
                    self._show(response.json()["lines"])
                self.stop.wait(POLL_SECONDS)
        except BaseException as exc:  # raised in the test
            self.error = exc

    def _show(self, rows: list[dict]) -> None:
        """As agent.js: `since` includes the last line's instant, so the lines already shown at
        that instant come again and are dropped."""
        repeated = Counter(self.shown_at_last_ts)
        for row in rows:
            key = (row["stream"], row["line"])
            if row["ts"] == self.last_ts and repeated[key] > 0:
                repeated[key] -= 1
                continue
            if row["ts"] != self.last_ts:
                self.last_ts, self.shown_at_last_ts, repeated = row["ts"], Counter(), Counter()
            self.shown_at_last_ts[key] += 1
            self.lines.append(row["line"])


def _console_cookie() -> str:
    client = Client()
    client.force_login(AdminFactory())
    return client.cookies[settings.SESSION_COOKIE_NAME].value


def test_two_open_agent_pages_leave_the_default_workers_to_the_api(
        watched, tenancy, tmp_path, docker_engine, docker_engine_url):
    key = tenancy.key("agents:read")
    cookie = _console_cookie()
    markers = [f"fleet-panel-{uuid.uuid4().hex[:8]}" for _ in watched]
    stop = threading.Event()
    with procfile_web_server(tmp_path, env=_server_env(docker_engine_url)) as server:
        panels = [LogPanel(f"{server}/admin/agents/agent/{agent.pk}/logs/", cookie, stop) for agent in watched]
        for panel in panels:
            panel.start()
        api_seconds = []
        try:
            for round_ in range(16):  # about 8 s: each page polls about four times meanwhile
                if round_ == 4:
                    for agent, marker in zip(watched, markers, strict=True):
                        _write(docker_engine, agent, marker)
                started = time.monotonic()
                response = requests.get(f"{server}/api/agents/{watched[round_ % 2].pk}", headers={"X-Api-Key": key},
                                        timeout=30)
                api_seconds.append(time.monotonic() - started)
                assert response.status_code == 200, response.text
                time.sleep(0.5)
        finally:
            stop.set()
            for panel in panels:
                panel.join(timeout=40)

    for panel, marker in zip(panels, markers, strict=True):
        assert panel.error is None, panel.error
        assert len(panel.answers) >= 3 and {status for status, _ in panel.answers} == {200}, panel.answers
        assert panel.lines.count(marker) == 1, panel.lines  # seen live, and once (since= includes its instant)
    assert max(api_seconds) < PROMPT_SECONDS, api_seconds


class Follow(threading.Thread):
    """An API live follow read as an EventSource reads it, every chunk as it comes."""

    def __init__(self, url: str, key: str):
        super().__init__(daemon=True)
        self.url, self.key = url, key
        self.chunks: list[tuple[float, bytes]] = []  # (when, chunk)
        self.error: BaseException | None = None

    def run(self):
        try:
            with requests.get(self.url, stream=True, timeout=30,
                              headers={"X-Api-Key": self.key, "Accept": "text/event-stream"}) as response:
                assert response.status_code == 200, response.text
                for chunk in response.iter_content(chunk_size=None):
                    self.chunks.append((time.monotonic(), chunk))
        except BaseException as exc:  # raised in the test
            self.error = exc


def test_under_gunicorn_two_api_follows_hold_both_workers_until_one_ends(
        watched, tenancy, tmp_path, docker_engine_url):
    key = tenancy.key("agents:read")
    env = _server_env(docker_engine_url, LOGS_FOLLOW_SECONDS=str(FOLLOW_SECONDS), LOGS_HEARTBEAT_SECONDS="1")
    with gunicorn_server(tmp_path, env=env, workers=2) as server:
        follows = [Follow(f"{server}/api/agents/{agent.pk}/logs?tail=1", key) for agent in watched]
        for follow in follows:
            follow.start()
        wait_until(lambda: all(follow.chunks for follow in follows), timeout=20)  # both being served
        asked = time.monotonic()
        answered = requests.get(f"{server}/api/health", timeout=30)
        waited = time.monotonic() - asked
        for follow in follows:
            follow.join(timeout=30)

    assert answered.status_code == 200
    for follow in follows:
        assert follow.error is None, follow.error
        assert b"event: reconnect" in follow.chunks[-1][1]  # it lasted its whole length
        ended = follow.chunks[-1][0]
        assert ended - follow.chunks[0][0] >= FOLLOW_SECONDS - 1
    # Nothing else was served until a follow ended and gave its worker back.
    assert waited >= FOLLOW_SECONDS - 2, waited
    assert asked + waited >= min(follow.chunks[-1][0] for follow in follows) - 0.5
