"""OAuth 2.0 end to end against a fake authorization server on loopback: start, the provider's
redirect, the public callback, the code exchange (PKCE S256 for X), refresh with rotation, and
every way a state is refused (replayed, expired, another provider's, a user who lost the agent)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from datetime import timedelta
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from django.utils import timezone

from fleet.models import Event
from integrations.models import Integration, OAuthState
from integrations.services import oauth_refresh, refresh_due
from integrations.tasks import refresh_oauth_tokens
from tests.infra.http import Reply
from tests.integrations.support import url
from tests.support import client_for
from workspaces.models import Membership

pytestmark = pytest.mark.django_db

CLIENT_ID, CLIENT_SECRET = "fleet-app", "client-s3cr3t-value"


class FakeAuthorizationServer:
    """Issues codes at /authorize (redirecting the browser back) and tokens at /token."""

    def __init__(self, receiver, *, pkce: bool, client_auth: str):
        self.receiver, self.pkce, self.client_auth = receiver, pkce, client_auth
        self.codes: dict[str, dict] = {}
        self.refresh_tokens: dict[str, int] = {}
        self.issued = 0
        self.refuse_refresh = False
        receiver.route("/authorize", self.authorize, method="GET")
        receiver.route("/token", self.token, method="POST")

    def authorize(self, request):
        q = {k: v[0] for k, v in request.query.items()}
        code = secrets.token_urlsafe(8)
        self.codes[code] = q
        target = f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}"
        return Reply(302, headers={"Location": target})

    def _client(self, request, form) -> tuple[str, str]:
        if self.client_auth == "basic":
            user, _, password = base64.b64decode(request.header("authorization").split()[1]).decode().partition(":")
            return user, password
        return form.get("client_id"), form.get("client_secret")

    def token(self, request):
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        if self._client(request, form) != (CLIENT_ID, CLIENT_SECRET):
            return Reply(401, {"error": "invalid_client"})
        if form["grant_type"] == "authorization_code":
            grant = self.codes.pop(form.get("code"), None)
            if grant is None or grant["redirect_uri"] != form.get("redirect_uri"):
                return Reply(400, {"error": "invalid_grant"})
            if self.pkce:
                challenge = base64.urlsafe_b64encode(
                    hashlib.sha256(form.get("code_verifier", "").encode()).digest()).rstrip(b"=").decode()
                if grant.get("code_challenge_method") != "S256" or challenge != grant.get("code_challenge"):
                    return Reply(400, {"error": "invalid_grant", "error_description": "PKCE check failed"})
            return self._tokens()
        if form["grant_type"] == "refresh_token":
            if self.refuse_refresh or self.refresh_tokens.pop(form.get("refresh_token"), None) is None:
                return Reply(400, {"error": "invalid_grant", "error_description": "refresh token revoked"})
            return self._tokens()
        return Reply(400, {"error": "unsupported_grant_type"})

    def _tokens(self):
        self.issued += 1
        refresh = f"refresh-{self.issued}-{secrets.token_hex(4)}"
        self.refresh_tokens[refresh] = self.issued
        return {"token_type": "bearer", "access_token": f"access-{self.issued}-{secrets.token_hex(4)}",
                "refresh_token": refresh, "expires_in": 3600 if self.client_auth == "basic" else 5184000}


@pytest.fixture
def editor(tenancy):
    return client_for(tenancy.editor)


@pytest.fixture(params=["twitter", "linkedin"])
def provider(request):
    return request.param


@pytest.fixture
def auth_server(http_receiver, settings, provider):
    settings.NEXTAUTH_URL = "https://fleet.example.com"
    settings.INTEGRATION_ENDPOINTS = {provider: {"authorize": http_receiver.url_for("/authorize"),
                                                 "token": http_receiver.url_for("/token"), "api": http_receiver.url}}
    twitter = provider == "twitter"
    return FakeAuthorizationServer(http_receiver, pkce=twitter, client_auth="basic" if twitter else "body")


def start(client, agent, provider):
    body = {"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}
    response = client.post(url(agent, f"/oauth/{provider}/start"), body, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def browse_to_provider(authorize_url) -> str:
    """The user's browser at the provider: it answers with a redirect back to Fleet."""
    answer = requests.get(authorize_url, allow_redirects=False, timeout=5)
    assert answer.status_code == 302
    return answer.headers["Location"]


def callback(client, location):
    parts = urlsplit(location)
    return client.get(parts.path + "?" + parts.query)


def test_start_answers_the_authorize_url_with_state_redirect_uri_and_scopes(editor, agent, auth_server, provider):
    body = start(editor, agent, provider)

    parts = urlsplit(body["authorizeUrl"])
    query = {k: v[0] for k, v in parse_qs(parts.query).items()}
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == auth_server.receiver.url_for("/authorize")
    assert query["state"] == body["state"] and query["client_id"] == CLIENT_ID and query["response_type"] == "code"
    assert query["redirect_uri"] == f"https://fleet.example.com/api/integrations/{provider}/oauth/callback"
    if provider == "twitter":
        assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
        assert "offline.access" in query["scope"].split()
    else:
        assert "code_challenge" not in query and "w_member_social" in query["scope"].split()
    assert CLIENT_SECRET not in body["authorizeUrl"]
    state = OAuthState.objects.get()
    assert state.state_digest != body["state"] and body["state"] not in state.state_digest


def test_the_full_flow_stores_encrypted_tokens_and_connects(editor, agent, auth_server, provider, tenancy):
    body = start(editor, agent, provider)

    response = callback(client_for(), browse_to_provider(body["authorizeUrl"]))

    assert response.status_code == 302
    assert response["Location"].startswith("/api/integrations/oauth/result?")
    assert "status=connected" in response["Location"]
    integration = Integration.objects.get(agent=agent, provider=provider)
    secret = json.loads(integration.secrets)
    assert secret["access_token"].startswith("access-1-") and secret["refresh_token"].startswith("refresh-1-")
    assert secret["client_secret"] == CLIENT_SECRET
    assert integration.status == "active" and integration.config == {"client_id": CLIENT_ID}
    lifetime = 3600 if provider == "twitter" else 5184000
    assert abs((integration.token_expires_at - timezone.now()).total_seconds() - lifetime) < 60
    record = editor.get(url(agent)).json()[0]
    assert record["config"] == {"client_id": CLIENT_ID, "client_secret": "[REDACTED]", "access_token": "[REDACTED]",
                                "refresh_token": "[REDACTED]"}
    prefix = "TWITTER" if provider == "twitter" else "LINKEDIN"
    # Only the access token and the non-secret config reach the runtime.
    assert record["envVars"] == [f"{prefix}_ACCESS_TOKEN", f"{prefix}_CLIENT_ID"]
    assert Event.objects.filter(kind="integration.connected", agent_id=agent.id).count() == 1


def test_the_result_page_says_how_it_ended(editor, agent, auth_server, provider):
    body = start(editor, agent, provider)
    location = callback(client_for(), browse_to_provider(body["authorizeUrl"]))["Location"]

    page = client_for().get(location)

    assert page.status_code == 200
    assert page.json() == {"provider": provider, "status": "connected", "integrationId": None,
                           "message": f"{'Twitter / X' if provider == 'twitter' else 'LinkedIn'} is connected."}


def test_a_client_asking_for_json_gets_the_result_instead_of_a_redirect(editor, agent, auth_server, provider):
    location = browse_to_provider(start(editor, agent, provider)["authorizeUrl"])
    parts = urlsplit(location)

    response = client_for().get(parts.path + "?" + parts.query, HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    assert response.json()["status"] == "connected"
    assert response.json()["integrationId"] == str(Integration.objects.get().id)


def test_a_replayed_state_is_refused(editor, agent, auth_server, provider):
    location = browse_to_provider(start(editor, agent, provider)["authorizeUrl"])
    callback(client_for(), location)

    again = callback(client_for(), location)

    assert again.status_code == 400
    assert again.json() == {"error": "The authorization state was already used; start again.",
                            "code": "invalid_oauth_state"}
    assert auth_server.issued == 1


def test_an_expired_state_is_refused(editor, agent, auth_server, provider, clock):
    location = browse_to_provider(start(editor, agent, provider)["authorizeUrl"])
    clock.advance(timedelta(minutes=10, seconds=1))

    response = callback(client_for(), location)

    assert response.status_code == 400 and "expired" in response.json()["error"]
    assert not Integration.objects.exists() and auth_server.issued == 0


def test_a_state_of_another_provider_is_refused(editor, agent, auth_server, provider):
    location = browse_to_provider(start(editor, agent, provider)["authorizeUrl"])
    other = "linkedin" if provider == "twitter" else "twitter"

    response = callback(client_for(), location.replace(f"/integrations/{provider}/", f"/integrations/{other}/"))

    assert response.status_code == 400 and response.json()["code"] == "invalid_oauth_state"
    assert not Integration.objects.exists()


def test_an_unknown_state_is_refused(auth_server, provider):
    response = client_for().get(f"/api/integrations/{provider}/oauth/callback", {"code": "c", "state": "forged"})

    assert response.status_code == 400 and response.json()["code"] == "invalid_oauth_state"


def test_a_state_is_bound_to_its_agent_and_user(editor, agent, auth_server, provider, tenancy):
    """The state names the agent it was started for: when its user may no longer operate that
    agent, the code is not exchanged and nothing lands on any agent."""
    location = browse_to_provider(start(editor, agent, provider)["authorizeUrl"])
    Membership.objects.filter(workspace=tenancy.workspace, user=tenancy.editor).update(role="viewer")

    response = callback(client_for(), location)

    assert response.status_code == 400 and "can no longer operate" in response.json()["error"]
    assert not Integration.objects.exists() and auth_server.issued == 0
    assert OAuthState.objects.get().agent_id == agent.id and OAuthState.objects.get().user_id == tenancy.editor.id


def test_a_state_started_for_one_agent_connects_that_agent_only(editor, tenancy, auth_server, provider):
    first, second = tenancy.agent(), tenancy.agent()
    location_first = browse_to_provider(start(editor, first, provider)["authorizeUrl"])
    start(editor, second, provider)

    callback(client_for(), location_first)

    assert list(Integration.objects.values_list("agent_id", flat=True)) == [first.id]


def test_a_provider_refusal_goes_to_the_result_page(auth_server, provider):
    response = client_for().get(f"/api/integrations/{provider}/oauth/callback", {"error": "access_denied"})

    assert response.status_code == 302 and "status=error" in response["Location"]


def test_a_failed_code_exchange_is_a_400_and_connects_nothing(editor, agent, auth_server, provider):
    body = start(editor, agent, provider)
    location = browse_to_provider(body["authorizeUrl"])
    auth_server.codes.clear()  # the provider forgot the code

    response = callback(client_for(), location)

    assert response.status_code == 400 and response.json()["code"] == "oauth_failed"
    assert "invalid_grant" in response.json()["error"] and not Integration.objects.exists()


@pytest.mark.parametrize("body", [{}, {"clientId": "c"}, {"clientId": "", "clientSecret": "s"}])
def test_start_needs_the_client_id_and_secret(editor, agent, body, provider):
    response = editor.post(url(agent, f"/oauth/{provider}/start"), body, format="json")

    assert response.status_code == 400 and response.json()["code"] == "validation_error"


def test_start_for_a_provider_without_oauth_is_a_400(editor, agent):
    response = editor.post(url(agent, "/oauth/github/start"), {"clientId": "c", "clientSecret": "s"}, format="json")

    assert response.status_code == 400 and "provider" in response.json()["fields"]


@pytest.mark.parametrize(("settings_values", "expected"), [
    ({"NEXTAUTH_URL": "https://a.example.com/", "NORA_PUBLIC_URL": "https://b.example.com"}, "https://a.example.com"),
    ({"NEXTAUTH_URL": "", "NORA_PUBLIC_URL": "https://b.example.com"}, "https://b.example.com"),
    ({"NEXTAUTH_URL": "", "NORA_PUBLIC_URL": ""}, "http://fleet.internal:8000"),
])
def test_the_redirect_uri_host_comes_from_the_settings_then_the_request(editor, agent, settings, settings_values,
                                                                        expected):
    for name, value in settings_values.items():
        setattr(settings, name, value)
    settings.ALLOWED_HOSTS = ["*"]

    response = editor.post(url(agent, "/oauth/twitter/start"), {"clientId": "c", "clientSecret": "s"},
                           format="json", HTTP_HOST="fleet.internal:8000")

    query = parse_qs(urlsplit(response.json()["authorizeUrl"]).query)
    assert query["redirect_uri"] == [f"{expected}/api/integrations/twitter/oauth/callback"]


# -- refresh ----------------------------------------------------------------------------------------


def connected(editor, agent, provider):
    callback(client_for(), browse_to_provider(start(editor, agent, provider)["authorizeUrl"]))
    return Integration.objects.get(agent=agent, provider=provider)


def test_refresh_rotates_the_access_and_refresh_tokens(editor, agent, auth_server, provider):
    integration = connected(editor, agent, provider)
    before = json.loads(integration.secrets)

    oauth_refresh(integration_id=integration.id)

    after = json.loads(Integration.objects.get().secrets)
    assert after["access_token"].startswith("access-2-") and after["refresh_token"].startswith("refresh-2-")
    assert before["refresh_token"] not in auth_server.refresh_tokens  # the old one is spent
    assert after["client_secret"] == CLIENT_SECRET


def test_tokens_are_due_for_refresh_within_the_providers_margin(editor, agent, auth_server, provider, clock):
    integration = connected(editor, agent, provider)
    margin = timedelta(minutes=10) if provider == "twitter" else timedelta(days=7)

    clock.move_to(integration.token_expires_at - margin - timedelta(seconds=5))
    assert refresh_due() == []
    clock.advance(timedelta(seconds=10))
    assert refresh_due() == [str(integration.id)]


def test_the_periodic_task_refreshes_what_is_due(editor, agent, auth_server, provider, settings, clock):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from fleet.celery import app

    app.conf.task_always_eager = True
    try:
        integration = connected(editor, agent, provider)
        clock.move_to(integration.token_expires_at - timedelta(seconds=30))

        assert refresh_oauth_tokens() == 1
    finally:
        app.conf.task_always_eager = False
    assert json.loads(Integration.objects.get().secrets)["access_token"].startswith("access-2-")
    assert Integration.objects.get().token_expires_at > timezone.now() + timedelta(minutes=59)


def test_a_failed_refresh_sets_error_and_emits_integration_failed(editor, agent, auth_server, provider):
    integration = connected(editor, agent, provider)
    auth_server.refuse_refresh = True

    oauth_refresh(integration_id=integration.id)

    integration.refresh_from_db()
    assert integration.status == "error" and "refresh token revoked" in integration.last_error
    event = Event.objects.get(kind="integration.failed")
    assert event.agent_id == agent.id and event.data["provider"] == provider
    assert CLIENT_SECRET not in json.dumps(event.data) and "refresh-" not in json.dumps(event.data)
    assert refresh_due() == []  # not retried until it is authorized again
