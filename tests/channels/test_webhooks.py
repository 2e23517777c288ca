"""POST /api/webhooks/:channelId: public, every refusal before anything is stored, 202 with the
stored message, redeliveries of one provider update stored once."""

from __future__ import annotations

import json
import time

import pytest

from channels.adapters import slack, webhook
from channels.models import ChannelMessage, Direction
from channels.services import legacy_channel_create, legacy_channel_update
from fleet.errors import ValidationFailed
from tests.support import client_for

pytestmark = pytest.mark.django_db

SLACK_SECRET = "slack-signing-secret"
HOOK_SECRET = "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ="


def _update(update_id=1, text="Hello", chat=42):
    return {"update_id": update_id, "message": {"message_id": 3, "chat": {"id": chat}, "from": {"id": 9},
                                                "text": text}}


@pytest.fixture
def telegram_channel(hermes_agent):
    return legacy_channel_create(agent=hermes_agent, type_="telegram",
                                 config={"botToken": "TOKEN-tg", "webhookSecret": "tg-secret"})


def _post(channel_id, body, **headers):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return client_for().post(f"/api/webhooks/{channel_id}", data, content_type="application/json", **headers)


def test_a_signed_telegram_update_is_stored_and_accepted(telegram_channel):
    response = _post(telegram_channel.pk, _update(), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert response.status_code == 202, response.content
    (message,) = ChannelMessage.objects.all()
    assert response.json() == {"received": True, "messageId": str(message.pk)}
    assert (message.direction, message.content, message.sender, message.provider_update_id) == (
        Direction.INBOUND, "Hello", "42", "1")


def test_a_redelivered_update_is_the_same_message(telegram_channel):
    first = _post(telegram_channel.pk, _update(7), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")
    again = _post(telegram_channel.pk, _update(7), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert first.json()["messageId"] == again.json()["messageId"]
    assert ChannelMessage.objects.count() == 1


@pytest.mark.parametrize("secret", [None, "wrong"])
def test_a_bad_telegram_secret_is_401_and_nothing_is_stored(telegram_channel, secret):
    headers = {"HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN": secret} if secret else {}

    response = _post(telegram_channel.pk, _update(), **headers)

    assert (response.status_code, response.json()["code"]) == (401, "invalid_signature")
    assert not ChannelMessage.objects.exists()


def test_an_unknown_or_send_only_channel_is_404(hermes_agent):
    email = legacy_channel_create(agent=hermes_agent, type_="email", config={"to": ["a@example.com"]})

    assert _post("00000000-0000-0000-0000-000000000000", _update()).status_code == 404
    assert _post(email.pk, _update()).status_code == 404
    assert client_for().post("/api/webhooks/not-a-uuid", {}).status_code == 404


def test_a_disabled_channel_is_409(telegram_channel):
    legacy_channel_update(channel=telegram_channel, enabled=False)

    response = _post(telegram_channel.pk, _update(), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert (response.status_code, response.json()["code"]) == (409, "channel_disabled")


def test_a_channel_without_its_secret_is_409_and_nothing_is_stored(hermes_agent):
    channel = legacy_channel_create(agent=hermes_agent, type_="slack", config={"botToken": "xoxb-1"})

    response = _post(channel.pk, {"type": "event_callback", "event": {"type": "message", "channel": "C1",
                                                                       "text": "hi"}})

    assert (response.status_code, response.json()["code"]) == (409, "inbound_secret_missing")
    assert not ChannelMessage.objects.exists()


def test_a_body_over_256_kb_is_413(telegram_channel):
    response = _post(telegram_channel.pk, b"{" + b" " * (256 * 1024) + b"}",
                     HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert (response.status_code, response.json()["code"]) == (413, "payload_too_large")
    assert not ChannelMessage.objects.exists()


@pytest.fixture
def hook_url(settings):
    settings.OUTBOUND_ALLOWED_HOSTS = ["127.0.0.1"]
    return "http://127.0.0.1:9/replies"


def test_the_rate_is_per_channel(hermes_agent, telegram_channel, settings):
    settings.CHANNELS_WEBHOOK_RATE = "3/1m"
    other = legacy_channel_create(agent=hermes_agent, type_="telegram",
                                  config={"botToken": "TOKEN-tg", "webhookSecret": "tg-secret"})
    answers = [_post(telegram_channel.pk, _update(n), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret").status_code
               for n in range(4)]

    assert answers == [202, 202, 202, 429]
    assert _post(other.pk, _update(9), HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret").status_code == 202


def test_malformed_json_is_400(telegram_channel):
    response = _post(telegram_channel.pk, b"{not json", HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert (response.status_code, response.json()["code"]) == (400, "validation_error")


def test_an_update_without_text_is_accepted_and_not_stored(telegram_channel):
    response = _post(telegram_channel.pk, {"update_id": 5, "my_chat_member": {}},
                     HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")

    assert response.status_code == 202 and response.json() == {"received": True, "messageId": None}
    assert not ChannelMessage.objects.exists()


def _slack_headers(body: bytes, secret=SLACK_SECRET, timestamp=None):
    timestamp = str(timestamp or int(time.time()))
    return {"HTTP_X_SLACK_REQUEST_TIMESTAMP": timestamp,
            "HTTP_X_SLACK_SIGNATURE": slack.signature(secret, timestamp, body)}


@pytest.fixture
def slack_channel(hermes_agent):
    return legacy_channel_create(agent=hermes_agent, type_="slack",
                                 config={"botToken": "xoxb-1", "signingSecret": SLACK_SECRET})


def test_slack_events_are_verified_by_the_signing_secret(slack_channel):
    body = json.dumps({"type": "event_callback", "event_id": "Ev1",
                       "event": {"type": "message", "channel": "C1", "user": "U1", "text": "hi"}}).encode()

    good = _post(slack_channel.pk, body, **_slack_headers(body))
    forged = _post(slack_channel.pk, body, **_slack_headers(body, secret="other"))
    stale = _post(slack_channel.pk, body, **_slack_headers(body, timestamp=int(time.time()) - 3600))

    assert good.status_code == 202
    assert forged.status_code == stale.status_code == 401
    (message,) = ChannelMessage.objects.all()
    assert (message.sender, message.provider_update_id) == ("C1", "Ev1")


def test_slack_url_verification_gets_its_challenge_and_bot_echoes_are_ignored(slack_channel):
    challenge = json.dumps({"type": "url_verification", "challenge": "abc"}).encode()
    echo = json.dumps({"type": "event_callback", "event_id": "Ev2",
                       "event": {"type": "message", "channel": "C1", "bot_id": "B1", "text": "our reply"}}).encode()

    assert _post(slack_channel.pk, challenge, **_slack_headers(challenge)).json() == {"challenge": "abc"}
    assert _post(slack_channel.pk, echo, **_slack_headers(echo)).json()["messageId"] is None


def test_generic_webhooks_are_verified_by_standard_webhooks(hermes_agent, hook_url):
    channel = legacy_channel_create(agent=hermes_agent, type_="webhook",
                                    config={"url": hook_url, "secret": HOOK_SECRET})
    body = json.dumps({"text": "ping", "sender": "alice"}).encode()
    timestamp = str(int(time.time()))
    signed = {"HTTP_WEBHOOK_ID": "msg_1", "HTTP_WEBHOOK_TIMESTAMP": timestamp,
              "HTTP_WEBHOOK_SIGNATURE": webhook.signature(secret=HOOK_SECRET, message_id="msg_1", timestamp=timestamp,
                                                          body=body)}

    assert _post(channel.pk, body, **{**signed, "HTTP_WEBHOOK_SIGNATURE": "v1,AAAA"}).status_code == 401
    assert _post(channel.pk, body, **signed).status_code == 202
    (message,) = ChannelMessage.objects.all()
    assert (message.content, message.sender, message.provider_update_id) == ("ping", "alice", "msg_1")


def test_a_whsec_secret_that_does_not_decode_is_refused_when_saved(hermes_agent, hook_url):
    # Alerts refuse it too (fleet.webhook_signing): one secret never signs two ways.
    with pytest.raises(ValidationFailed) as refused:
        legacy_channel_create(agent=hermes_agent, type_="webhook", config={"url": hook_url, "secret": "whsec_***"})
    assert "base64" in str(refused.value.fields)
