"""The gateway proxy, in the web process's own ASGI application: the single-use link and its
cookie, what reaches a runtime and what comes back, and who is refused, for HTTP and WebSocket.
The runtime here is an adopted one at a loopback HTTP server that records what it is sent (the
relay's own behaviour); the real OpenClaw Control UI through a real browser is
test_proxy_browser.py's."""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlsplit

import pytest

from accounts.tokens import session_token_issue, sessions_revoke
from agents.proxy import sessions
from agents.proxy.cookie import COOKIE_NAME
from tests.factories.agents import AgentFactory, WorkspaceAgentFactory
from tests.infra.asgi import edge_request, edge_socket
from workspaces.models import ApiKey, Membership

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def runtime(http_receiver, settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    return http_receiver


@pytest.fixture
def adopted(tenancy, runtime):
    agent = AgentFactory(
        owner=tenancy.agent_owner, status="running", is_external=True, deploy_target="external",
        execution_target_id="external", container_id="", gateway_url=runtime.url,
        gateway_token=secrets.token_urlsafe(32),
    )
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return agent


def host_of(agent) -> str:
    return f"{agent.pk}.gw.localhost:8000"


def link_for(agent, caller_headers: dict) -> str:
    response = edge_request("POST", f"/api/agents/{agent.pk}/gateway/session", headers=caller_headers)
    assert response.status == 200, response.body
    return response.json()["url"]


def exchange(url: str):
    parts = urlsplit(url)
    return edge_request("GET", f"{parts.path}?{parts.query}", headers={"host": parts.netloc})


def signed_in(agent, user) -> str:
    """The proxy cookie `user`'s browser holds after opening a link into `agent`'s UI."""
    answer = exchange(link_for(agent, {"authorization": f"Bearer {session_token_issue(user=user)}"}))
    assert answer.status == 302, answer.body
    return answer.headers["set-cookie"].split(";")[0]


def test_a_link_opens_the_agents_own_origin_once_and_leaves_a_cookie_only_it_gets(adopted, tenancy):
    url = link_for(adopted, {"x-api-key": tenancy.key("agents:write")})
    parts = urlsplit(url)

    assert parts.netloc == host_of(adopted) and parts.path == sessions.EXCHANGE_PATH
    first, second = exchange(url), exchange(url)

    assert (first.status, first.headers["location"]) == (302, "/")
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Domain" not in cookie and "Max-Age=28800" in cookie
    assert (second.status, second.json()["code"]) == (401, "not_authenticated")


def test_a_link_expires_and_never_opens_another_agent(adopted, tenancy, monkeypatch):
    other = AgentFactory(owner=tenancy.agent_owner, status="running")
    monkeypatch.setattr(sessions, "TICKET_SECONDS", 1)
    headers = {"x-api-key": tenancy.key("agents:write")}
    stale, elsewhere = link_for(adopted, headers), link_for(adopted, headers)

    time.sleep(1.2)
    assert exchange(stale).status == 401
    parts = urlsplit(elsewhere)
    moved = edge_request("GET", f"{parts.path}?{parts.query}", headers={"host": host_of(other)})
    assert moved.status == 401


def test_requests_reach_the_runtime_with_its_auth_and_without_the_browsers_credentials(adopted, tenancy, runtime):
    cookie = signed_in(adopted, tenancy.editor)
    runtime.respond_with(200, {"said": f"token {adopted.gateway_token} inside"})

    answer = edge_request("POST", "/ui/path?q=1&r=two", body=b'{"x": 1}', headers={
        "host": host_of(adopted), "cookie": f"theme=dark; {cookie}", "authorization": "Bearer browser-own",
        "x-forwarded-for": "203.0.113.9", "content-type": "application/json",
        "origin": f"http://{host_of(adopted)}",
    })

    assert answer.status == 200
    text = answer.body.decode()
    assert adopted.gateway_token not in text and "x" * len(adopted.gateway_token) in text
    seen = runtime.wait_for(1)[0]
    assert (seen.method, seen.path, seen.query) == ("POST", "/ui/path", {"q": ["1"], "r": ["two"]})
    assert seen.header("authorization") == f"Bearer {adopted.gateway_token}"
    assert seen.header("cookie") == "theme=dark"
    assert seen.header("x-forwarded-for") is None
    assert seen.header("origin") == runtime.url.rstrip("/")
    assert seen.body == b'{"x": 1}'


def test_a_large_body_passes_whole(adopted, tenancy, runtime):
    cookie = signed_in(adopted, tenancy.editor)
    body = secrets.token_bytes(3 * 1024 * 1024)

    assert edge_request("PUT", "/upload", body=body, headers={"host": host_of(adopted), "cookie": cookie}).status == 200

    assert runtime.wait_for(1)[0].body == body


@pytest.mark.parametrize("path", ["/a/../b", "/a/%2e%2e/b", "/a%00b", "//elsewhere.test/x", "/a\\b"])
def test_a_path_fleet_will_not_pass_on_is_400(adopted, tenancy, runtime, path):
    cookie = signed_in(adopted, tenancy.editor)

    answer = edge_request("GET", path, headers={"host": host_of(adopted), "cookie": cookie})

    assert (answer.status, answer.json()["code"]) == (400, "bad_request")
    assert runtime.requests == []


def test_who_is_refused_and_how(adopted, tenancy, runtime):
    def status(cookie: str) -> tuple[int, str]:
        answer = edge_request("GET", "/", headers={"host": host_of(adopted), "cookie": cookie})
        return answer.status, answer.json()["code"]

    assert status("") == (401, "not_authenticated")
    assert status(f"{COOKIE_NAME}=forged:value") == (401, "not_authenticated")
    viewer_cookie = signed_in(adopted, tenancy.editor)  # an editor when it opened the link...
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.editor).update(role="viewer")
    assert status(viewer_cookie) == (403, "permission_denied")  # ...a viewer now
    leaving = signed_in(adopted, tenancy.admin)
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.admin).delete()
    assert status(leaving) == (404, "not_found")
    revoked = signed_in(adopted, tenancy.owner)
    sessions_revoke(user=tenancy.owner)
    assert status(revoked) == (401, "not_authenticated")
    assert runtime.requests == []


def test_a_key_holders_cookie_ends_with_the_key(adopted, tenancy, runtime):
    key = tenancy.key("agents:write")
    answer = exchange(link_for(adopted, {"x-api-key": key}))
    cookie = answer.headers["set-cookie"].split(";")[0]

    ApiKey.objects.update(revoked_at="2026-01-01T00:00:00Z")

    refused = edge_request("GET", "/", headers={"host": host_of(adopted), "cookie": cookie})
    assert (refused.status, refused.json()["code"]) == (401, "not_authenticated")


def test_a_viewer_and_a_readonly_key_get_no_link(adopted, tenancy):
    by_viewer = edge_request("POST", f"/api/agents/{adopted.pk}/gateway/session",
                             headers={"authorization": f"Bearer {session_token_issue(user=tenancy.viewer)}"})
    by_reader = edge_request("POST", f"/api/agents/{adopted.pk}/gateway/session",
                             headers={"x-api-key": tenancy.key("agents:read")})

    assert by_viewer.status == 403 and by_reader.status == 403


def test_a_stopped_agent_is_409_and_a_runtime_that_is_down_502(adopted, tenancy, runtime):
    cookie = signed_in(adopted, tenancy.editor)
    runtime.stop()

    down = edge_request("GET", "/", headers={"host": host_of(adopted), "cookie": cookie})
    type(adopted).objects.filter(pk=adopted.pk).update(status="stopped")
    stopped = edge_request("GET", "/", headers={"host": host_of(adopted), "cookie": cookie})

    assert (down.status, down.json()["code"]) == (502, "gateway_unreachable")
    assert (stopped.status, stopped.json()["code"]) == (409, "agent_not_running")


def test_a_websocket_is_refused_before_it_is_accepted_without_a_valid_cookie(adopted, tenancy):
    with edge_socket("/", headers={"host": host_of(adopted)}) as anonymous:
        assert not anonymous.accepted and anonymous.close_code == 4401
    viewer_cookie = signed_in(adopted, tenancy.editor)
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.editor).update(role="viewer")
    with edge_socket("/", headers={"host": host_of(adopted), "cookie": viewer_cookie}) as viewer:
        assert not viewer.accepted and viewer.close_code == 4403
