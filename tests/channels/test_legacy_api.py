"""Legacy channels of a Hermes agent: CRUD with redacted config, real test sends through each
adapter (loopback fakes of the provider APIs, Django's mail outbox), and the message history."""

from __future__ import annotations

import pytest

from channels.models import ChannelMessage, Direction, LegacyChannel
from channels.services import legacy_channel_create

pytestmark = pytest.mark.django_db

WEBHOOK_SECRET = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="


def _url(agent, suffix=""):
    return f"/api/agents/{agent.id}/channels{suffix}"


def test_a_telegram_channel_is_created_read_redacted_updated_and_deleted(tenancy, hermes_agent):
    editor = tenancy.client("editor")

    created = editor.post(_url(hermes_agent), {"type": "telegram", "name": "Support bot", "config": {
        "botToken": "TOKEN-tg", "webhookSecret": "s3cret-s3cret", "defaultChatId": "42"}}, format="json")

    assert created.status_code == 201, created.content
    record = created.json()
    assert record["config"] == {"botToken": "[REDACTED]", "webhookSecret": "[REDACTED]", "defaultChatId": "42"}
    assert record["inboundUrl"] == f"/api/webhooks/{record['id']}"
    assert (record["type"], record["name"], record["enabled"]) == ("telegram", "Support bot", True)
    assert set(record) == {"id", "type", "name", "enabled", "config", "inboundUrl", "createdAt", "updatedAt"}
    payload = tenancy.client("viewer").get(_url(hermes_agent)).json()
    assert payload["runtime"] == "legacy" and payload["channels"] == [record]
    assert payload["capabilities"]["supportsTesting"] and payload["capabilities"]["supportsMessageHistory"]
    assert "TOKEN-tg" not in str(payload)

    patched = editor.patch(_url(hermes_agent, f"/{record['id']}"),
                           {"config": {"botToken": "[REDACTED]", "defaultChatId": "43"}, "enabled": False},
                           format="json")
    assert patched.status_code == 200, patched.content
    channel = LegacyChannel.objects.get()
    assert channel.secret_values["botToken"] == "TOKEN-tg" and channel.config["defaultChatId"] == "43"
    assert channel.enabled is False

    deleted = editor.delete(_url(hermes_agent, f"/{record['id']}"))
    assert deleted.json() == {"success": True} and not LegacyChannel.objects.exists()


def test_a_receiving_channel_saved_without_its_secret_gets_one_shown_once(tenancy, hermes_agent):
    editor = tenancy.client("editor")

    created = editor.post(_url(hermes_agent), {"type": "telegram", "config": {"botToken": "TOKEN-tg"}},
                          format="json").json()
    (listed,) = editor.get(_url(hermes_agent)).json()["channels"]

    generated = LegacyChannel.objects.get().secret_values["webhookSecret"]
    assert created["config"]["webhookSecret"] == generated and created["inboundUrl"]
    assert listed["config"]["webhookSecret"] == "[REDACTED]"


def test_an_email_channel_has_no_inbound_url(tenancy, hermes_agent):
    created = tenancy.client("editor").post(_url(hermes_agent), {"type": "email", "config": {"to": ["a@example.com"]}},
                                            format="json")

    assert created.json()["inboundUrl"] is None and created.json()["name"] == "Email"


@pytest.mark.parametrize(("body", "field"), [
    ({"type": "webhook", "config": {"url": "http://127.0.0.1:9/hook"}}, "config.url"),
    ({"type": "webhook", "config": {"url": "ftp://example.com/x"}}, "config.url"),
    ({"type": "email", "config": {"to": ["not-an-address"]}}, "config.to"),
    ({"type": "email", "config": {"to": [f"u{i}@example.com" for i in range(11)]}}, "config.to"),
    ({"type": "discord", "config": {"botToken": "x"}}, "config.channelId"),
    ({"type": "slack", "config": {"botToken": "x"}, "name": ""}, "name"),
    ({"type": "slack", "config": {"botToken": "x"}, "name": "n" * 101}, "name"),
])
def test_bad_input_is_a_400_naming_the_field(tenancy, hermes_agent, body, field):
    response = tenancy.client("editor").post(_url(hermes_agent), body, format="json")

    assert response.status_code == 400, response.content
    assert field in response.json()["fields"]


def test_an_unknown_legacy_type_or_channel_is_404(tenancy, hermes_agent):
    editor = tenancy.client("editor")

    assert editor.post(_url(hermes_agent), {"type": "whatsapp", "config": {}}, format="json").status_code == 404
    assert editor.delete(_url(hermes_agent, "/not-a-uuid")).status_code == 404
    assert editor.delete(_url(hermes_agent, "/00000000-0000-0000-0000-000000000000")).status_code == 404


def test_a_channel_of_another_agent_is_404(tenancy, hermes_agent):
    other = tenancy.agent(runtime_family="hermes")
    channel = legacy_channel_create(agent=other, type_="email", config={"to": ["a@example.com"]})

    response = tenancy.client("editor").get(_url(hermes_agent, f"/{channel.pk}/messages"))

    assert response.status_code == 404


def test_test_sends_through_the_telegram_bot_api(tenancy, hermes_agent, api_bases):
    channel = legacy_channel_create(agent=hermes_agent, type_="telegram",
                                    config={"botToken": "TOKEN-tg", "defaultChatId": "42"})

    response = tenancy.client("editor").post(_url(hermes_agent, f"/{channel.pk}/test"))

    assert response.json() == {"success": True}
    (request,) = api_bases["telegram"].requests
    assert request.path == "/botTOKEN-tg/sendMessage" and request.json()["chat_id"] == "42"
    (message,) = ChannelMessage.objects.all()
    assert message.direction == Direction.OUTBOUND and message.metadata["test"] is True


def test_test_sends_through_slack_and_discord(tenancy, hermes_agent, api_bases):
    slack = legacy_channel_create(agent=hermes_agent, type_="slack",
                                  config={"botToken": "xoxb-1", "defaultChannel": "C1"})
    discord = legacy_channel_create(agent=hermes_agent, type_="discord",
                                    config={"botToken": "dbot", "channelId": "555"})
    editor = tenancy.client("editor")

    assert editor.post(_url(hermes_agent, f"/{slack.pk}/test")).json() == {"success": True}
    assert editor.post(_url(hermes_agent, f"/{discord.pk}/test")).json() == {"success": True}

    (posted,) = api_bases["slack"].requests
    assert posted.header("Authorization") == "Bearer xoxb-1" and posted.json()["channel"] == "C1"
    (sent,) = api_bases["discord"].requests
    assert sent.header("Authorization") == "Bot dbot" and "Test message" in sent.json()["content"]


def test_a_refused_send_answers_the_error_without_the_token(tenancy, hermes_agent, api_bases):
    api_bases["telegram"].route("/botTOKEN-bad/sendMessage", (401, {"ok": False, "description": "Unauthorized"}))
    channel = legacy_channel_create(agent=hermes_agent, type_="telegram",
                                    config={"botToken": "TOKEN-bad", "defaultChatId": "42"})

    body = tenancy.client("editor").post(_url(hermes_agent, f"/{channel.pk}/test")).json()

    assert body["success"] is False and "Unauthorized" in body["error"] and "TOKEN-bad" not in body["error"]


def test_test_without_a_target_fails_cleanly(tenancy, hermes_agent, api_bases):
    channel = legacy_channel_create(agent=hermes_agent, type_="slack", config={"botToken": "xoxb-1"})

    body = tenancy.client("editor").post(_url(hermes_agent, f"/{channel.pk}/test")).json()

    assert body["success"] is False and "defaultChannel" in body["error"]


def test_email_and_webhook_tests_send_for_real(tenancy, hermes_agent, http_receiver, settings, smtp_server):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    email = legacy_channel_create(agent=hermes_agent, type_="email", config={"to": ["ops@example.com"]})
    hook = legacy_channel_create(agent=hermes_agent, type_="webhook",
                                 config={"url": http_receiver.url_for("/hook"), "secret": WEBHOOK_SECRET})
    editor = tenancy.client("editor")

    assert editor.post(_url(hermes_agent, f"/{email.pk}/test")).json() == {"success": True}
    assert editor.post(_url(hermes_agent, f"/{hook.pk}/test")).json() == {"success": True}

    (sent,) = smtp_server.wait_for(1)
    assert sent.rcpt_tos == ["ops@example.com"] and "Test message" in sent.text
    assert sent.subject.startswith("[Fleet] Test message")
    (request,) = http_receiver.requests
    assert request.header("webhook-signature").startswith("v1,") and "Test message" in request.json()["text"]


def test_the_test_route_is_throttled_per_channel(tenancy, hermes_agent, settings, smtp_server):
    settings.ALERT_TEST_RATE_PER_RULE = "2/10m"
    email = legacy_channel_create(agent=hermes_agent, type_="email", config={"to": ["ops@example.com"]})
    editor = tenancy.client("editor")

    answers = [editor.post(_url(hermes_agent, f"/{email.pk}/test")) for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429] and answers[2].json()["code"] == "rate_limited"
    assert len(smtp_server.messages) == 2  # sent inline: nothing more arrives later


def test_messages_are_newest_first_limited_and_validated(tenancy, hermes_agent):
    channel = legacy_channel_create(agent=hermes_agent, type_="email", config={"to": ["a@example.com"]})
    for n in range(5):
        ChannelMessage.objects.create(channel=channel, direction=Direction.INBOUND, content=f"m{n}")
    viewer = tenancy.client("viewer")

    listed = viewer.get(_url(hermes_agent, f"/{channel.pk}/messages?limit=3")).json()
    everything = viewer.get(_url(hermes_agent, f"/{channel.pk}/messages")).json()

    assert [m["content"] for m in listed] == ["m4", "m3", "m2"]
    assert len(everything) == 5 and set(everything[0]) >= {"direction", "content", "metadata", "created_at"}
    for bad in ("0", "201", "x"):
        response = viewer.get(_url(hermes_agent, f"/{channel.pk}/messages?limit={bad}"))
        assert (response.status_code, response.json()["code"]) == (400, "validation_error")
