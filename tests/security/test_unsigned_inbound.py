"""A legacy channel without its verification secret has no public inbound URL.

Telegram and generic webhook channels get a secret generated on save, shown once in that save's
answer and `[REDACTED]` on every read; a Slack channel (whose signing secret is Slack's) and a
row stored before the fix refuse inbound with 409 inbound_secret_missing until one is set.
An unsigned request is never stored, so it never becomes an agent turn."""

from __future__ import annotations

import json
import time

import pytest

from channels.adapters import slack, webhook
from channels.config import CheckedConfig
from channels.models import ChannelMessage, LegacyChannel
from tests.support import client_for

pytestmark = pytest.mark.django_db

@pytest.fixture
def hermes_agent(tenancy):
    return tenancy.agent(runtime_family="hermes")


UPDATE = {"update_id": 1, "message": {"message_id": 3, "chat": {"id": 666}, "from": {"id": 9}, "text": "pwn"}}


def _channels(agent, suffix=""):
    return f"/api/agents/{agent.id}/channels{suffix}"


def _inbound(url, body, **headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client_for().post(url, data, content_type="application/json", **headers)


def _create(tenancy, agent, type_, config):
    response = tenancy.client("editor").post(_channels(agent), {"type": type_, "config": config}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_telegram_channel_saved_without_a_secret_gets_one_shown_once(tenancy, hermes_agent):
    record = _create(tenancy, hermes_agent, "telegram", {"botToken": "TOKEN-tg"})

    secret = record["config"]["webhookSecret"]
    assert secret not in ("", "[REDACTED]") and len(secret) >= 32
    assert LegacyChannel.objects.get().secret_values["webhookSecret"] == secret
    for caller in ("viewer", "editor"):
        (row,) = tenancy.client(caller).get(_channels(hermes_agent)).json()["channels"]
        assert row["config"]["webhookSecret"] == "[REDACTED]" and secret not in json.dumps(row)

    unsigned = _inbound(record["inboundUrl"], UPDATE)
    forged = _inbound(record["inboundUrl"], UPDATE, HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="guess")
    signed = _inbound(record["inboundUrl"], UPDATE, HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=secret)

    assert (unsigned.status_code, forged.status_code, signed.status_code) == (401, 401, 202)
    assert ChannelMessage.objects.count() == 1


def test_a_secret_the_caller_sends_is_kept_and_not_echoed(tenancy, hermes_agent):
    record = _create(tenancy, hermes_agent, "telegram", {"botToken": "TOKEN-tg", "webhookSecret": "mine-mine"})

    assert record["config"]["webhookSecret"] == "[REDACTED]"
    assert LegacyChannel.objects.get().secret_values["webhookSecret"] == "mine-mine"


def test_a_webhook_channel_gets_a_standard_webhooks_secret(tenancy, hermes_agent, settings):
    record = _create(tenancy, hermes_agent, "webhook", {"url": "http://127.0.0.1:9/replies"})
    secret = record["config"]["secret"]
    body = json.dumps({"text": "hello", "sender": "mallory"}).encode()
    timestamp = str(int(time.time()))
    signed = {"HTTP_WEBHOOK_ID": "msg_1", "HTTP_WEBHOOK_TIMESTAMP": timestamp,
              "HTTP_WEBHOOK_SIGNATURE": webhook.signature(secret=secret, message_id="msg_1", timestamp=timestamp,
                                                          body=body)}

    assert secret.startswith("whsec_")
    assert _inbound(record["inboundUrl"], body).status_code == 401
    assert _inbound(record["inboundUrl"], body, **signed).status_code == 202
    assert ChannelMessage.objects.count() == 1


def test_a_slack_channel_without_its_signing_secret_refuses_inbound(tenancy, hermes_agent):
    record = _create(tenancy, hermes_agent, "slack", {"botToken": "xoxb-1"})
    url = f"/api/webhooks/{record['id']}"
    event = json.dumps({"type": "event_callback", "event_id": "Ev1",
                        "event": {"type": "message", "channel": "C1", "user": "U1", "text": "pwn"}}).encode()

    assert record["inboundUrl"] is None and "signingSecret" not in record["config"]
    response = _inbound(url, event)
    assert (response.status_code, response.json()["code"]) == (409, "inbound_secret_missing")
    assert "signingSecret" in response.json()["error"]
    assert not ChannelMessage.objects.exists()

    patched = tenancy.client("editor").patch(_channels(hermes_agent, f"/{record['id']}"),
                                             {"config": {"signingSecret": "from-slack"}}, format="json").json()
    timestamp = str(int(time.time()))
    headers = {"HTTP_X_SLACK_REQUEST_TIMESTAMP": timestamp,
               "HTTP_X_SLACK_SIGNATURE": slack.signature("from-slack", timestamp, event)}
    assert patched["inboundUrl"] == url and patched["config"]["signingSecret"] == "[REDACTED]"
    assert _inbound(url, event).status_code == 401
    assert _inbound(url, event, **headers).status_code == 202


def test_a_channel_stored_without_a_secret_refuses_until_saved_again(tenancy, hermes_agent):
    channel = LegacyChannel(agent=hermes_agent, type="telegram", name="Old")  # as stored before the fix
    channel.store(CheckedConfig(public={}, secrets={"botToken": "TOKEN-tg"}))
    channel.save()
    url = f"/api/webhooks/{channel.pk}"

    (row,) = tenancy.client("viewer").get(_channels(hermes_agent)).json()["channels"]
    refused = _inbound(url, UPDATE)

    assert row["inboundUrl"] is None
    assert (refused.status_code, refused.json()["code"]) == (409, "inbound_secret_missing")
    assert not ChannelMessage.objects.exists()

    saved = tenancy.client("editor").patch(_channels(hermes_agent, f"/{channel.pk}"), {}, format="json").json()
    secret = saved["config"]["webhookSecret"]
    assert saved["inboundUrl"] == url and secret != "[REDACTED]"
    assert _inbound(url, UPDATE, HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=secret).status_code == 202
    again = tenancy.client("editor").patch(_channels(hermes_agent, f"/{channel.pk}"), {"enabled": True},
                                           format="json").json()
    assert again["config"]["webhookSecret"] == "[REDACTED]"  # shown once: not on a later save


def test_sending_null_rotates_the_generated_secret(tenancy, hermes_agent):
    record = _create(tenancy, hermes_agent, "telegram", {"botToken": "TOKEN-tg"})
    old = record["config"]["webhookSecret"]

    rotated = tenancy.client("editor").patch(_channels(hermes_agent, f"/{record['id']}"),
                                             {"config": {"webhookSecret": None}}, format="json").json()

    new = rotated["config"]["webhookSecret"]
    assert new not in (old, "[REDACTED]")
    assert _inbound(record["inboundUrl"], UPDATE, HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=old).status_code == 401
    assert _inbound(record["inboundUrl"], UPDATE, HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN=new).status_code == 202
