"""Secrets set through the API (passwords, provider keys, API keys, webhook secrets and headers,
channel and integration credentials) never reach the audit table, its exports or its console page:
each request leaves its row with the body's field names only."""

import pytest

from audit.models import AuditEntry
from tests.support import client_for

pytestmark = pytest.mark.django_db

PASSWORD, NEW_PASSWORD = "first-Secret-pw-71c", "second-Secret-pw-93d"
PROVIDER_KEY = "sk-provider-5d8e1f2a9b7c"
WEBHOOK_SECRET = "whsec_" + "c2VjcmV0LWF1ZGl0LXNjYW4ta2V5LTEyMzQ1Njc4"
HEADER_VALUE = "Bearer audit-header-token-6b2f"
BOT_TOKEN = "123456:telegram-bot-token-4c1d"
INTEGRATION_TOKEN = "ghp_integration0token0a1b2c3d4e5f"


def secret_actions(tenancy, settings):
    """(client, method, url, body) of each action that sets a secret."""
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    person = tenancy.owner
    person.set_password(PASSWORD)
    person.save()
    agent = tenancy.agent(tenancy.editor)
    ws = f"/api/workspaces/{tenancy.workspace.id}"
    owner = client_for(person)
    editor = client_for(tenancy.editor)
    return [
        (client_for(), "post", "/api/auth/login", {"email": person.email, "password": PASSWORD}),
        (client_for(), "post", "/api/auth/login", {"email": person.email, "password": NEW_PASSWORD}),  # refused
        (client_for(), "post", "/api/auth/signup", {"email": "new@example.com", "password": NEW_PASSWORD,
                                                    "name": "New"}),
        (owner, "post", "/api/llm/keys", {"provider": "openai", "label": "mine", "apiKey": PROVIDER_KEY}),
        (owner, "post", f"{ws}/api-keys", {"name": "ci", "scopes": ["agents:read"]}),
        (owner, "post", f"{ws}/alert-rules", {"name": "Ops", "eventPattern": "agent.*", "channels": [
            {"type": "webhook", "url": "http://127.0.0.1:9/hook", "secret": WEBHOOK_SECRET,
             "headers": {"Authorization": HEADER_VALUE}}]}),
        (editor, "post", f"/api/agents/{agent.id}/channels", {"type": "telegram", "config": {
            "botToken": BOT_TOKEN}}),
        (editor, "post", f"/api/agents/{agent.id}/integrations", {"provider": "github",
                                                                   "config": {"token": INTEGRATION_TOKEN}}),
        # Last: a new password ends the owner's sessions.
        (owner, "patch", "/api/auth/password", {"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD}),
    ]


def test_no_secret_value_reaches_the_audit_table_its_exports_or_its_page(tenancy, settings, console):
    secrets = {PASSWORD, NEW_PASSWORD, PROVIDER_KEY, WEBHOOK_SECRET, HEADER_VALUE, BOT_TOKEN, INTEGRATION_TOKEN}
    AuditEntry.objects.all()._raw_delete(AuditEntry.objects.db)  # the console's own sign-in row
    answers = []
    for client, method, url, body in secret_actions(tenancy, settings):
        response = getattr(client, method)(url, body, format="json")
        assert response.status_code < 500, (url, response.content)
        answers.append(response.json())
    # The raw API key and the session token were answered once each: looked for too.
    secrets |= {answer[name] for answer in answers for name in ("key", "token") if name in answer}
    assert len(secrets) == 9, answers

    rows = list(AuditEntry.objects.order_by("id"))
    assert len(rows) == len(answers)  # one row each, refused or not
    assert rows[-1].detail == ["currentPassword", "newPassword"]
    assert rows[6].detail == ["config", "type"]
    platform = client_for(tenancy.platform_admin)
    outlets = {
        "table": str(list(AuditEntry.objects.values())),
        "csv": b"".join(platform.get("/api/audit?format=csv").streaming_content).decode(),
        "json": b"".join(platform.get("/api/audit?format=json").streaming_content).decode(),
        "page": "".join(console.get(f"/admin/audit/auditentry/{row.id}/change/").content.decode() for row in rows),
    }
    found = [(where, secret[:6]) for where, text in outlets.items() for secret in secrets if secret in text]
    assert found == []
    assert [row.result for row in rows] == ["ok", "invalid_credentials", *(["ok"] * 7)], answers
