"""Defects 4 and 15: webhook header values are secrets (encrypted at rest, "[REDACTED]" in every
read, kept when written back as "[REDACTED]"), and values HTTP cannot send are refused on save."""

from __future__ import annotations

import pytest
from django.db import connection

from alerts.models import AlertChannel

pytestmark = pytest.mark.django_db

TOKEN = "Bearer s3cr3t-webhook-token"


def rules_url(tenancy, rule=None):
    base = f"/api/workspaces/{tenancy.workspace.id}/alert-rules"
    return f"{base}/{rule}" if rule else base


def create(tenancy, headers, client="owner"):
    body = {"name": "r", "eventPattern": "*",
            "channels": [{"type": "webhook", "url": "http://127.0.0.1:9/h", "headers": headers}]}
    return tenancy.client(client).post(rules_url(tenancy), body, format="json")


@pytest.mark.parametrize("reader", ["viewer", "key:agents:read", "owner"])
def test_header_values_read_back_redacted(tenancy, reader):
    rule_id = create(tenancy, {"Authorization": TOKEN}).json()["id"]

    listed = tenancy.client(reader).get(rules_url(tenancy))
    one = tenancy.client(reader).get(rules_url(tenancy, rule_id)) if reader == "owner" else listed

    for response in (listed, one):
        assert TOKEN not in response.content.decode()
    assert listed.json()[0]["channels"][0]["headers"] == {"Authorization": "[REDACTED]"}


def test_header_values_are_encrypted_at_rest(tenancy):
    create(tenancy, {"Authorization": TOKEN})

    with connection.cursor() as cursor:
        cursor.execute("SELECT config::text, header_values FROM alerts_alertchannel")
        rows = cursor.fetchall()
    assert rows and all("s3cr3t" not in (config or "") + (values or "") for config, values in rows)
    assert AlertChannel.objects.get().headers == {"Authorization": TOKEN}


def test_redacted_sent_back_keeps_the_stored_value_and_new_values_replace_it(tenancy):
    rule_id = create(tenancy, {"Authorization": TOKEN, "X-Team": "ops"}).json()["id"]
    channels = tenancy.client("owner").get(rules_url(tenancy)).json()[0]["channels"]
    channels[0]["headers"]["X-Team"] = "platform"

    response = tenancy.client("owner").patch(rules_url(tenancy, rule_id), {"channels": channels}, format="json")

    assert response.status_code == 200
    assert AlertChannel.objects.get().headers == {"Authorization": TOKEN, "X-Team": "platform"}


def test_redacted_without_a_stored_value_is_refused(tenancy):
    response = create(tenancy, {"Authorization": "[REDACTED]"})

    assert response.status_code == 400
    assert any(key.startswith("channels.0.headers") for key in response.json()["fields"])


@pytest.mark.parametrize("value", ["Bearer jeton-\u00e9t\u00e9\u2713", "\u4f60\u597d"])
def test_a_non_latin1_header_value_is_refused_on_save(tenancy, value):
    response = create(tenancy, {"X-Note": value})

    assert response.status_code == 400
    assert "channels.0.headers.X-Note" in response.json()["fields"]


def test_a_latin1_header_value_is_accepted(tenancy):
    assert create(tenancy, {"X-Note": "caf\u00e9"}).status_code == 200
