"""No integration secret in clear anywhere it could leak: after a full cycle (connect, test,
sync to a real OpenClaw, an OAuth authorization and refresh, remove) every API response,
captured log line, stored event, published Celery task and admin page is scanned."""

from __future__ import annotations

import json
import logging

import pytest
from celery.signals import before_task_publish
from django.test import Client

from fleet.celery import app
from fleet.models import Event
from integrations.models import Integration
from integrations.services import oauth_refresh
from tests.factories.accounts import AdminFactory
from tests.factories.agents import WorkspaceAgentFactory
from tests.integrations.support import url
from tests.integrations.test_oauth import CLIENT_ID, CLIENT_SECRET, FakeAuthorizationServer, browse_to_provider
from tests.support import client_for

pytestmark = [pytest.mark.docker, pytest.mark.runtime, pytest.mark.django_db]

GITHUB = "ghp_leakcheck-github-0123456789"
STRIPE = "sk_test_leakcheck-stripe-9876543210"
POSTGRES_PASSWORD = "pg-leakcheck-password-555"


class Recorder:
    """Every response body and Location header the cycle received."""

    def __init__(self):
        self.texts: list[str] = []

    def __call__(self, response):
        self.texts.append(response.content.decode(errors="replace"))
        if response.has_header("Location"):
            self.texts.append(response["Location"])
        return response


@pytest.fixture
def published():
    bodies = []

    def record(sender=None, body=None, headers=None, **kwargs):
        bodies.append(json.dumps([sender, body, headers], default=str))

    before_task_publish.connect(record, weak=False)
    yield bodies
    before_task_publish.disconnect(record)
    app.control.purge()  # nothing here runs them; leave no message for a later worker


def test_no_secret_is_ever_shown_in_clear(openclaw_runtime, tenancy, http_receiver, settings, caplog, published,
                                          django_capture_on_commit_callbacks):
    caplog.set_level(logging.DEBUG)  # every logger, libraries' wire logs included
    settings.NEXTAUTH_URL = "https://fleet.example.com"
    settings.INTEGRATION_ENDPOINTS = {
        "github": {"api": http_receiver.url},
        "twitter": {"authorize": http_receiver.url_for("/authorize"), "token": http_receiver.url_for("/token"),
                    "api": http_receiver.url},
    }
    auth_server = FakeAuthorizationServer(http_receiver, pkce=True, client_auth="basic")
    http_receiver.route("/user", {"login": "octo"})
    agent = openclaw_runtime.agent(owner=tenancy.agent_owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    seen = Recorder()
    editor = client_for(tenancy.editor)
    key = tenancy.client("key:agents:write")

    with django_capture_on_commit_callbacks(execute=True):
        gh = seen(editor.post(url(agent), {"provider": "github", "config": {"token": GITHUB}}, format="json")).json()
        st = seen(key.post(url(agent), {"provider": "stripe", "config": {"secret_key": STRIPE}, "mcpEnabled": True},
                           format="json")).json()
        seen(editor.post(url(agent), {"provider": "postgresql",
                                      "config": {"database_url": f"postgres://a:{POSTGRES_PASSWORD}@db/x"}},
                         format="json"))
        seen(editor.patch(url(agent, f"/{st['id']}"), {"config": {"secret_key": "[REDACTED]"}}, format="json"))
        seen(editor.post(url(agent, f"/{gh['id']}/test")))
        seen(editor.post(url(agent, f"/{st['id']}/test")))  # no endpoint override: refused or unreachable
        seen(editor.post(url(agent, "/sync")))
        start = seen(editor.post(url(agent, "/oauth/twitter/start"),
                                 {"clientId": CLIENT_ID, "clientSecret": CLIENT_SECRET}, format="json")).json()
        location = browse_to_provider(start["authorizeUrl"])
        callback = seen(client_for().get(location.split("fleet.example.com", 1)[1]))
        seen(client_for().get(callback["Location"]))
        twitter = Integration.objects.get(provider="twitter")
        first_tokens = json.loads(twitter.secrets)
        oauth_refresh(integration_id=twitter.id)
        seen(editor.post(url(agent, "/sync")))
        seen(editor.get(url(agent)))
        seen(key.get(url(agent)))
        console = Client()
        console.force_login(AdminFactory())
        seen(console.get("/admin/integrations/integration/"))
        for integration in Integration.objects.all():
            page = seen(console.get(f"/admin/integrations/integration/{integration.pk}/change/"))
            assert page.status_code == 200
        seen(console.get("/admin/fleet/event/"))
        latest_tokens = json.loads(Integration.objects.get(provider="twitter").secrets)
        for integration in Integration.objects.all():
            seen(editor.delete(url(agent, f"/{integration.id}")))

    # The state is no secret of the integration: the start answers it for the browser's redirect.
    secrets = {GITHUB, STRIPE, POSTGRES_PASSWORD, CLIENT_SECRET, *first_tokens.values(), *latest_tokens.values()}
    events = [json.dumps([e.kind, e.message, e.data]) for e in Event.objects.all()]
    places = {"responses": seen.texts, "logs": [r.getMessage() for r in caplog.records],
              "events": events, "celery task messages": published}
    assert auth_server.issued == 2 and len(events) >= 4 and published  # the cycle really ran
    for place, texts in places.items():
        for text in texts:
            for secret in secrets:
                assert secret not in text, f"a secret in clear in {place}: {text[:300]}"
    assert not Integration.objects.exists()
