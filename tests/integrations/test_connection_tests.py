"""POST /agents/:id/integrations/:iid/test: the provider's API is called with the stored
credentials, on a real loopback HTTP server standing in for it (INTEGRATION_ENDPOINTS)."""

from __future__ import annotations

import base64

import pytest

from integrations.models import Integration
from integrations.services import integration_connect, integration_test
from tests.infra.http import Reply
from tests.integrations.support import url
from tests.support import client_for

pytestmark = pytest.mark.django_db

SECRET = "s3cr3t-credential-value-42"


def basic(user, password):
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


# provider: (config, method, path, the header that must carry the credential, its value, success body)
PROVIDERS = {
    "github": ({"token": SECRET}, "GET", "/user", "authorization", f"Bearer {SECRET}", {"login": "octo"}),
    "gitlab": ({"token": SECRET}, "GET", "/api/v4/user", "private-token", SECRET, {"id": 1}),
    "slack": ({"bot_token": SECRET}, "POST", "/api/auth.test", "authorization", f"Bearer {SECRET}", {"ok": True}),
    "notion": ({"token": SECRET}, "GET", "/v1/users/me", "authorization", f"Bearer {SECRET}", {"object": "user"}),
    "stripe": ({"secret_key": SECRET}, "GET", "/v1/balance", "authorization", f"Bearer {SECRET}", {"available": []}),
    "linear": ({"api_key": SECRET}, "POST", "/graphql", "authorization", SECRET, {"data": {"viewer": {"id": "u"}}}),
    "jira": ({"domain": "acme.atlassian.net", "email": "ops@acme.test", "api_token": SECRET}, "GET",
             "/rest/api/3/myself", "authorization", basic("ops@acme.test", SECRET), {"accountId": "1"}),
    "openai": ({"api_key": SECRET}, "GET", "/v1/models", "authorization", f"Bearer {SECRET}", {"data": []}),
    "anthropic": ({"api_key": SECRET}, "GET", "/v1/models", "x-api-key", SECRET, {"data": []}),
    "sentry": ({"auth_token": SECRET}, "GET", "/api/0/", "authorization", f"Bearer {SECRET}", {"user": {}}),
    "datadog": ({"api_key": SECRET}, "GET", "/api/v1/validate", "dd-api-key", SECRET, {"valid": True}),
    "pagerduty": ({"api_key": SECRET}, "GET", "/abilities", "authorization", f"Token token={SECRET}",
                  {"abilities": []}),
    "supabase": ({"url": "http://127.0.0.1:1", "service_role_key": SECRET}, "GET", "/rest/v1/", "apikey", SECRET,
                 {"swagger": "2.0"}),
    "twilio": ({"account_sid": "AC123", "auth_token": SECRET}, "GET", "/2010-04-01/Accounts/AC123.json",
               "authorization", basic("AC123", SECRET), {"sid": "AC123"}),
    "sendgrid": ({"api_key": SECRET}, "GET", "/v3/scopes", "authorization", f"Bearer {SECRET}", {"scopes": []}),
}


def pointed_at(settings, receiver, provider):
    settings.INTEGRATION_ENDPOINTS = {provider: {"api": receiver.url}}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_provider_accepting_the_credentials_passes(agent, settings, http_receiver, provider):
    config, method, path, header, value, body = PROVIDERS[provider]
    pointed_at(settings, http_receiver, provider)
    http_receiver.route(path, body, method=method)
    integration = integration_connect(agent=agent, provider=provider, config=config)

    result = integration_test(integration=integration)

    assert result.success, result.error
    request = http_receiver.wait_for(1)[0]
    assert (request.method, request.path, request.header(header)) == (method, path, value)


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_a_provider_refusing_the_credentials_fails_with_its_message(agent, settings, http_receiver, provider):
    config, method, path, *_ = PROVIDERS[provider]
    pointed_at(settings, http_receiver, provider)
    http_receiver.route(path, Reply(401, {"message": "Bad credentials"}), method=method)
    integration = integration_connect(agent=agent, provider=provider, config=config)

    result = integration_test(integration=integration)

    assert not result.success
    assert result.error.endswith("answered 401: Bad credentials")


@pytest.mark.parametrize(("provider", "reply", "error"), [
    ("slack", {"ok": False, "error": "invalid_auth"}, "Slack refused the credentials: invalid_auth"),
    ("datadog", {"valid": False}, "Datadog refused the credentials: not accepted"),
    ("linear", {"errors": [{"message": "Authentication required"}]},
     "Linear refused the credentials: Authentication required"),
])
def test_a_2xx_answer_that_says_no_is_a_failure(agent, settings, http_receiver, provider, reply, error):
    config, method, path, *_ = PROVIDERS[provider]
    pointed_at(settings, http_receiver, provider)
    http_receiver.route(path, reply, method=method)
    integration = integration_connect(agent=agent, provider=provider, config=config)

    assert integration_test(integration=integration).error == error


def test_a_self_hosted_base_url_comes_from_the_config(agent, http_receiver):
    http_receiver.route("/api/v4/user", {"id": 1})
    config = {"token": SECRET, "url": http_receiver.url}
    integration = integration_connect(agent=agent, provider="gitlab", config=config)

    assert integration_test(integration=integration).success
    assert http_receiver.wait_for(1)[0].header("private-token") == SECRET


def test_a_message_echoing_the_secret_is_scrubbed(agent, settings, http_receiver):
    pointed_at(settings, http_receiver, "github")
    http_receiver.route("/user", Reply(403, {"message": f"token {SECRET} is revoked"}))
    integration = integration_connect(agent=agent, provider="github", config={"token": SECRET})

    error = integration_test(integration=integration).error

    assert SECRET not in error and error == "GitHub answered 403: token [REDACTED] is revoked"


def test_an_unreachable_provider_is_a_failure(agent, settings, http_receiver):
    pointed_at(settings, http_receiver, "github")
    http_receiver.stop()
    integration = integration_connect(agent=agent, provider="github", config={"token": SECRET})

    assert integration_test(integration=integration).error == "GitHub could not be reached (ConnectionError)."


def test_a_loopback_provider_is_refused_unless_allowed(agent, settings, http_receiver):
    settings.OUTBOUND_ALLOWED_HOSTS = []
    pointed_at(settings, http_receiver, "github")
    integration = integration_connect(agent=agent, provider="github", config={"token": SECRET})

    result = integration_test(integration=integration)

    assert not result.success and "not an allowed target" in result.error and "loopback" in result.error
    assert http_receiver.requests == []


def test_a_provider_without_a_test_says_the_credentials_are_stored(agent):
    integration = integration_connect(agent=agent, provider="tavily", config={"api_key": SECRET})

    result = integration_test(integration=integration)

    assert result.as_dict() == {"success": True, "message": "Credentials are stored; Tavily has no connection test."}


def test_the_route_answers_the_result_and_records_it(agent, tenancy, settings, http_receiver):
    pointed_at(settings, http_receiver, "sendgrid")
    http_receiver.route("/v3/scopes", {"scopes": ["mail.send"]})
    integration = integration_connect(agent=agent, provider="sendgrid", config={"api_key": SECRET})
    client = client_for(tenancy.editor)

    response = client.post(url(agent, f"/{integration.id}/test"))

    assert (response.status_code, response.json()) == (200, {"success": True, "message": "Connected to SendGrid."})
    record = client.get(url(agent)).json()[0]
    assert record["lastTestResult"] == {"success": True, "message": "Connected to SendGrid."}
    assert record["lastTestedAt"] == Integration.objects.get().last_tested_at.isoformat()


def test_a_failed_test_is_recorded_too(agent, tenancy, settings, http_receiver):
    pointed_at(settings, http_receiver, "stripe")
    http_receiver.route("/v1/balance", Reply(401, {"error": {"message": "Invalid API Key provided"}}))
    integration = integration_connect(agent=agent, provider="stripe", config={"secret_key": SECRET})

    body = client_for(tenancy.editor).post(url(agent, f"/{integration.id}/test")).json()

    assert body == {"success": False, "error": "Stripe answered 401: Invalid API Key provided"}
    assert Integration.objects.get().last_test_result == body
