"""Defect 2: an unsafe request authenticated by the service_auth cookie must prove same origin;
Bearer and key requests are unchanged; gateway UIs are not served on the control plane's host."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from accounts.tokens import session_token_issue
from agents.models import Status
from agents.services.lifecycle import agent_gateway_url

pytestmark = pytest.mark.django_db


def cookie_client(user) -> APIClient:
    client = APIClient()
    client.cookies["service_auth"] = session_token_issue(user=user)
    return client


def test_a_cross_site_text_plain_post_with_the_cookie_stops_nothing(tenancy):
    agent = tenancy.agent(owner=tenancy.editor, status=Status.RUNNING, container_id="c1")

    response = cookie_client(tenancy.editor).post(
        f"/api/agents/{agent.id}/stop", data="x=1", content_type="text/plain", HTTP_ORIGIN="https://evil.example"
    )

    assert (response.status_code, response.json()["code"]) == (403, "csrf_failed")
    agent.refresh_from_db()
    assert agent.status == Status.RUNNING


@pytest.mark.parametrize("headers", [{}, {"HTTP_ORIGIN": "null"}, {"HTTP_REFERER": "https://evil.example/page"}])
def test_a_cookie_post_without_proof_of_origin_is_refused(tenancy, headers):
    response = cookie_client(tenancy.owner).post("/api/workspaces", {"name": "w"}, format="json", **headers)

    assert (response.status_code, response.json()["code"]) == (403, "csrf_failed")


@pytest.mark.parametrize("headers", [{"HTTP_ORIGIN": "http://testserver"},
                                     {"HTTP_REFERER": "http://testserver/console"}])
def test_a_same_origin_cookie_post_passes(tenancy, headers):
    response = cookie_client(tenancy.owner).post("/api/workspaces", {"name": "w"}, format="json", **headers)

    assert response.status_code == 201


def test_a_trusted_origin_passes(tenancy, settings):
    settings.CSRF_TRUSTED_ORIGINS = ["https://console.example"]

    response = cookie_client(tenancy.owner).post(
        "/api/workspaces", {"name": "w"}, format="json", HTTP_ORIGIN="https://console.example"
    )

    assert response.status_code == 201


def test_cookie_reads_need_no_origin(tenancy):
    assert cookie_client(tenancy.owner).get("/api/workspaces").status_code == 200


def test_bearer_and_key_posts_need_no_origin(tenancy):
    bearer = APIClient()
    bearer.credentials(HTTP_AUTHORIZATION=f"Bearer {session_token_issue(user=tenancy.owner)}",
                       HTTP_ORIGIN="https://evil.example")
    assert bearer.post("/api/workspaces", {"name": "w"}, format="json").status_code == 201
    key = tenancy.client("key:agents:write")
    agent = tenancy.agent(owner=tenancy.owner)
    assert key.post(f"/api/workspaces/{tenancy.workspace.id}/agents", {"agentId": str(agent.id)},
                    format="json", HTTP_ORIGIN="https://evil.example").status_code == 200


def test_an_agents_ui_is_on_an_origin_of_its_own_never_the_control_planes(tenancy, settings):
    settings.NORA_PUBLIC_URL = "https://fleet.example.com"
    settings.GATEWAY_PROXY_DOMAIN = "gw.fleet.example.com"
    agent = tenancy.agent(is_external=True, gateway_url="http://10.1.2.3:18789/", gateway_host_port=18789)
    other = tenancy.agent(is_external=True, gateway_url="http://10.1.2.4:18789/", gateway_host_port=18789)

    url = agent_gateway_url(agent=agent, secure=True).url

    assert url == f"https://{agent.pk}.gw.fleet.example.com/"  # not fleet.example.com, whose cookies it would get
    assert agent_gateway_url(agent=other, secure=True).url != url  # nor another agent's origin
