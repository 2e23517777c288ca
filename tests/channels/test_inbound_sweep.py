"""The inbound sweep (beat job channels.sweep_inbound): which messages a lost task left behind it
queues again, and which it leaves alone. No runtime: only what gets queued is checked here; the
takeover itself is answered by a real Hermes in test_hermes_runtime.py."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.apps import apps
from django.utils import timezone

from channels.models import ChannelMessage, Direction, MessageState
from channels.services import legacy_channel_create, stale_inbound_requeue
from channels.services.inbound import claim_expiry, inbound_forward

pytestmark = pytest.mark.django_db


def _message(channel, state, *, claimed_ago=None, created_ago=None, direction=Direction.INBOUND):
    now = timezone.now()
    message = ChannelMessage.objects.create(channel=channel, direction=direction, content="hi", sender="1",
                                            state=state,
                                            claimed_at=now - claimed_ago if claimed_ago is not None else None)
    if created_ago is not None:
        ChannelMessage.objects.filter(pk=message.pk).update(created_at=now - created_ago)
    return str(message.pk)


def test_expired_claims_and_old_pending_messages_of_running_agents_are_queued(
        hermes_agent, django_capture_on_commit_callbacks, settings):
    hermes_agent.status = "running"
    hermes_agent.save(update_fields=["status"])
    channel = legacy_channel_create(agent=hermes_agent, type_="telegram", config={"botToken": "T"})
    late = claim_expiry() + timedelta(seconds=1)
    _message(channel, MessageState.FORWARDING, claimed_ago=timedelta(seconds=1))  # a live turn
    _message(channel, MessageState.FORWARDING, claimed_ago=late)  # a dead worker's
    _message(channel, MessageState.FORWARDING)  # claimed before claims had a time
    _message(channel, MessageState.PENDING)  # its task is on its way
    _message(channel, MessageState.PENDING, created_ago=late)  # its task was lost
    _message(channel, MessageState.ANSWERED, claimed_ago=late)
    _message(channel, MessageState.FORWARDING, claimed_ago=late, direction=Direction.OUTBOUND)  # a reply: never resent

    with django_capture_on_commit_callbacks() as callbacks:
        assert stale_inbound_requeue() == 3
    assert len(callbacks) == 3


def test_pending_messages_of_a_stopped_agent_wait_for_its_start(hermes_agent, django_capture_on_commit_callbacks):
    channel = legacy_channel_create(agent=hermes_agent, type_="telegram", config={"botToken": "T"})
    _message(channel, MessageState.PENDING, created_ago=claim_expiry() * 2)

    with django_capture_on_commit_callbacks() as callbacks:
        assert stale_inbound_requeue() == 0
    assert not callbacks


def test_a_live_claim_is_not_taken_over(hermes_agent):
    channel = legacy_channel_create(agent=hermes_agent, type_="telegram", config={"botToken": "T"})
    message_id = _message(channel, MessageState.FORWARDING, claimed_ago=claim_expiry() - timedelta(seconds=5))

    assert inbound_forward(message_id=message_id) == "skipped"
    assert ChannelMessage.objects.get(pk=message_id).attempts == 0


def test_the_claim_expiry_follows_the_turn_timeout_and_margin(settings):
    settings.CHANNELS_TURN_TIMEOUT_SECONDS, settings.CHANNELS_CLAIM_MARGIN_SECONDS = 100, 20
    assert claim_expiry() == timedelta(seconds=120)


def test_the_sweep_is_a_declared_beat_job():
    jobs = {job.task: job for job in apps.get_app_config("channels").periodic_tasks}
    assert jobs["channels.sweep_inbound"].every_seconds == 60
