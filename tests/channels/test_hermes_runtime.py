"""Legacy channels against a real Hermes 0.19.0 and the loopback fake model: an inbound webhook
becomes a chat turn (a real Celery worker forwards it), the reply goes back through loopback fakes
of the Telegram Bot API and the Slack API, and both directions show in the message history."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from channels.adapters import slack
from channels.models import ChannelMessage, Direction, MessageState
from channels.services import inbound_forward, legacy_channel_create, reply_send, stale_inbound_requeue
from channels.services.inbound import claim_expiry
from tests.factories.agents import WorkspaceAgentFactory
from tests.infra.fake_model import ANSWER
from tests.support import client_for

pytestmark = [pytest.mark.runtime, pytest.mark.worker]
# Reads what the runtimes hold and adds conversations, never changes them: the session's runtimes serve.
SHARES_RUNTIMES = True

SLACK_SECRET = "slack-signing-secret"


@pytest.fixture
def agent(hermes_runtime, tenancy):
    agent = hermes_runtime.agent(owner=tenancy.agent_owner)
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return agent


def _reply_of(message_id):
    return ChannelMessage.objects.filter(reply_to_id=message_id, state=MessageState.SENT).first()


def test_telegram_and_slack_messages_become_chat_turns_answered_through_the_providers(
        agent, tenancy, api_bases, fake_model, celery_worker_live):
    editor = tenancy.client("editor")
    telegram = editor.post(f"/api/agents/{agent.id}/channels", {"type": "telegram", "config": {
        "botToken": "TOKEN-tg", "webhookSecret": "tg-secret"}}, format="json").json()
    slack_channel = editor.post(f"/api/agents/{agent.id}/channels", {"type": "slack", "config": {
        "botToken": "xoxb-1", "signingSecret": SLACK_SECRET}}, format="json").json()
    update = {"update_id": 1001, "message": {"message_id": 5, "chat": {"id": 42}, "from": {"id": 9},
                                             "text": "Hello from Telegram"}}

    accepted = client_for().post(f"/api/webhooks/{telegram['id']}", update, format="json",
                                 HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")
    assert accepted.status_code == 202, accepted.content
    inbound_id = accepted.json()["messageId"]
    reply = celery_worker_live.wait_until(lambda: _reply_of(inbound_id), timeout=90)

    (sent,) = api_bases["telegram"].wait_for(1)
    assert sent.path == "/botTOKEN-tg/sendMessage"
    assert sent.json() == {"chat_id": "42", "text": ANSWER}
    assert reply.content == ANSWER
    assert any("Hello from Telegram" in json.dumps(r.get("messages")) for r in fake_model.requests)

    again = client_for().post(f"/api/webhooks/{telegram['id']}", update, format="json",
                              HTTP_X_TELEGRAM_BOT_API_SECRET_TOKEN="tg-secret")
    assert again.json()["messageId"] == inbound_id  # the provider's redelivery: not answered twice

    body = json.dumps({"type": "event_callback", "event_id": "Ev42", "event": {
        "type": "message", "channel": "C7", "user": "U1", "text": "Hello from Slack"}}).encode()
    timestamp = str(int(time.time()))
    from_slack = client_for().post(f"/api/webhooks/{slack_channel['id']}", body, content_type="application/json",
                                   HTTP_X_SLACK_REQUEST_TIMESTAMP=timestamp,
                                   HTTP_X_SLACK_SIGNATURE=slack.signature(SLACK_SECRET, timestamp, body))
    assert from_slack.status_code == 202, from_slack.content
    celery_worker_live.wait_until(lambda: _reply_of(from_slack.json()["messageId"]), timeout=90)
    (posted,) = api_bases["slack"].wait_for(1)
    assert posted.json() == {"channel": "C7", "text": ANSWER}
    assert posted.header("Authorization") == "Bearer xoxb-1"

    history = editor.get(f"/api/agents/{agent.id}/channels/{telegram['id']}/messages").json()
    assert [(m["direction"], m["content"]) for m in history] == [("outbound", ANSWER),
                                                                 ("inbound", "Hello from Telegram")]
    time.sleep(1)
    assert len(api_bases["telegram"].requests) == 1  # one answer, even after the redelivery


def test_a_message_waits_while_the_agent_starts_and_is_answered_once_it_runs(agent, api_bases, fake_model):
    channel = legacy_channel_create(agent=agent, type_="telegram", config={"botToken": "TOKEN-tg"})
    message = ChannelMessage.objects.create(channel=channel, direction=Direction.INBOUND, content="Are you up?",
                                            sender="42", provider_update_id="77")
    agent.status = "deploying"
    agent.save(update_fields=["status"])

    assert inbound_forward(message_id=message.pk) == "retry"
    message.refresh_from_db()
    assert message.state == MessageState.PENDING and message.attempts == 1

    agent.status = "running"
    agent.save(update_fields=["status"])
    assert inbound_forward(message_id=message.pk) == "answered"
    assert inbound_forward(message_id=message.pk) == "skipped"  # claimed once: never forwarded twice
    reply = ChannelMessage.objects.get(reply_to=message)
    assert reply_send(message_id=reply.pk) is True
    assert reply_send(message_id=reply.pk) is False
    assert [r.json()["text"] for r in api_bases["telegram"].requests] == [ANSWER]


def test_a_dead_workers_stale_claim_is_taken_over_and_answered_exactly_once(
        agent, api_bases, fake_model, django_capture_on_commit_callbacks):
    channel = legacy_channel_create(agent=agent, type_="telegram", config={"botToken": "TOKEN-tg"})
    # What a worker killed mid chat turn leaves: the message claimed (forwarding), no reply.
    message = ChannelMessage.objects.create(channel=channel, direction=Direction.INBOUND, content="Still there?",
                                            sender="42", provider_update_id="78", state=MessageState.FORWARDING,
                                            attempts=1, claimed_at=timezone.now() - timedelta(seconds=5))

    with django_capture_on_commit_callbacks() as queued:
        assert stale_inbound_requeue() == 0
    assert inbound_forward(message_id=message.pk) == "skipped"  # a live claim: its turn may still be running
    assert not queued

    ChannelMessage.objects.filter(pk=message.pk).update(
        claimed_at=timezone.now() - claim_expiry() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks() as queued:
        assert stale_inbound_requeue() == 1  # the sweep, for a broker that dropped the task

    assert inbound_forward(message_id=message.pk) == "answered"  # the redelivered (or swept) task
    assert inbound_forward(message_id=message.pk) == "skipped"  # the other of the two
    message.refresh_from_db()
    assert (message.state, message.attempts) == (MessageState.ANSWERED, 2)

    # A worker that was slow rather than dead and reaches its reply last: the first reply stands.
    ChannelMessage.objects.filter(pk=message.pk).update(
        state=MessageState.FORWARDING, claimed_at=timezone.now() - claim_expiry() - timedelta(seconds=1))
    assert inbound_forward(message_id=message.pk) == "skipped"
    message.refresh_from_db()
    assert message.state == MessageState.ANSWERED
    (reply,) = ChannelMessage.objects.filter(reply_to=message)
    assert reply_send(message_id=reply.pk) is True
    assert reply_send(message_id=reply.pk) is False
    time.sleep(0.5)
    assert [r.json()["text"] for r in api_bases["telegram"].requests] == [ANSWER]
