"""Inbound webhooks of legacy channels: check, store, forward to the runtime, answer back.

A message is stored before anything else happens to it and claimed by a conditional UPDATE
before it is forwarded, so two tasks never forward it twice; a provider's redelivery (same
update id) is the same row. The reply is one row per inbound message (reply_to is unique),
sent once through the adapter. A message whose agent is not running stays pending and is
forwarded when the agent starts (channels.apps subscribes to agent.running/started/restarted).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from agents.gateway import AgentNotRunning, GatewayError, GatewayUnreachable
from agents.models import IN_FLIGHT, SERVING, Agent
from fleet.errors import FleetError, ValidationFailed
from fleet.task_queue import task_named

from ..adapters import ChallengeAnswer, Ignored, Inbound, adapter_for, inbound_secret_field, inbound_secret_generator
from ..definitions import RUNTIME_LEGACY, definition_for
from ..errors import ChannelDisabled, ChannelNotFound, InboundSecretMissing
from ..models import ChannelMessage, Direction, LegacyChannel, MessageState
from .common import channel_gateway
from .legacy import legacy_channel_send

# The tasks (channels.tasks) that call inbound_forward and reply_send.
FORWARD_TASK = "channels.forward_inbound"
REPLY_TASK = "channels.send_reply"

logger = logging.getLogger(__name__)

SWEEP_BATCH = 500  # per sweep; the next tick takes the rest
MAX_CONTENT = 32 * 1024


@dataclass(frozen=True)
class Received:
    message: ChannelMessage | None = None
    handshake: dict | None = None
    duplicate: bool = False


def receiving_channel(channel_id) -> LegacyChannel:
    channel = LegacyChannel.objects.select_related("agent").filter(pk=channel_id).first()
    definition = definition_for(RUNTIME_LEGACY, channel.type) if channel else None
    if channel is None or definition is None or not definition.receives:
        raise ChannelNotFound()
    return channel


def _require_inbound_secret(channel: LegacyChannel) -> None:
    field = inbound_secret_field(channel.type)
    if channel.secret_values.get(field):
        return
    if inbound_secret_generator(channel.type):
        raise InboundSecretMissing(f"The channel has no {field} to verify inbound requests with: save the channel "
                                   "(PATCH) and Fleet generates one, shown once in that answer.")
    raise InboundSecretMissing(f"The channel has no {field} to verify inbound requests with: set the one the "
                               "provider issued on the channel (PATCH config) before it receives.")


def webhook_receive(*, channel: LegacyChannel, headers, body: bytes) -> Received:
    """Verify (401 before anything is stored), parse and store an inbound request."""
    if not channel.enabled:
        raise ChannelDisabled()
    _require_inbound_secret(channel)
    adapter = adapter_for(channel.type)
    adapter.verify(channel.config or {}, channel.secret_values, headers, body)
    try:
        payload = json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError):
        raise ValidationFailed({"body": ["Expected a JSON object."]}) from None
    if not isinstance(payload, dict):
        raise ValidationFailed({"body": ["Expected a JSON object."]})
    parsed = adapter.parse(payload, headers)
    if isinstance(parsed, ChallengeAnswer):
        return Received(handshake=parsed.body)
    if isinstance(parsed, Ignored):
        return Received()
    return _store(channel, parsed)


def _store(channel: LegacyChannel, inbound: Inbound) -> Received:
    fields = dict(direction=Direction.INBOUND, content=inbound.text[:MAX_CONTENT], sender=inbound.sender,
                  metadata=inbound.metadata, provider_update_id=inbound.update_id)
    try:
        with transaction.atomic():
            message = ChannelMessage.objects.create(channel=channel, **fields)
            task_named(FORWARD_TASK).delay_on_commit(str(message.pk))
    except IntegrityError:  # the provider delivered this update before: the same message
        message = ChannelMessage.objects.get(channel=channel, provider_update_id=inbound.update_id)
        return Received(message=message, duplicate=True)
    return Received(message=message)


def claim_expiry() -> timedelta:
    """How old a forwarding claim must be to be a dead worker's: the turn's own timeout (the
    live worker has given up by then) plus a margin."""
    return timedelta(seconds=settings.CHANNELS_TURN_TIMEOUT_SECONDS + settings.CHANNELS_CLAIM_MARGIN_SECONDS)


def _claimable(now) -> Q:
    # Pending, or forwarding under a claim that expired (no claim time: claimed before Fleet
    # recorded one, long ago).
    stale = Q(claimed_at__lt=now - claim_expiry()) | Q(claimed_at__isnull=True)
    return Q(state=MessageState.PENDING) | (Q(state=MessageState.FORWARDING) & stale)


def inbound_forward(*, message_id) -> str:
    """Forward one inbound message to its agent's runtime and queue the reply. Answers
    "answered", "retry" (the runtime is coming up: try again later), "waiting" (the agent is
    stopped: forwarded at its next start), "failed" or "skipped" (not ours to forward: answered,
    or another task holds a live claim). A claim a dead worker left behind is taken over once
    it has expired; the reply row (one per inbound message) keeps the answer single."""
    now = timezone.now()
    claimed = ChannelMessage.objects.filter(_claimable(now), pk=message_id, direction=Direction.INBOUND).update(
        state=MessageState.FORWARDING, claimed_at=now, attempts=F("attempts") + 1)
    if not claimed:
        return "skipped"
    mine = ChannelMessage.objects.filter(pk=message_id, state=MessageState.FORWARDING, claimed_at=now)
    message = ChannelMessage.objects.select_related("channel__agent").get(pk=message_id)
    channel, agent = message.channel, message.channel.agent
    try:
        reply = channel_gateway(agent).send_message(message.content, conversation=f"{channel.pk}:{message.sender}",
                                                    timeout=settings.CHANNELS_TURN_TIMEOUT_SECONDS)
    except (AgentNotRunning, GatewayUnreachable) as exc:
        mine.update(state=MessageState.PENDING, claimed_at=None, error=exc.message[:500])
        agent.refresh_from_db(fields=["status"])
        return "retry" if agent.status in IN_FLIGHT or isinstance(exc, GatewayUnreachable) else "waiting"
    except (GatewayError, FleetError) as exc:
        mine.update(state=MessageState.FAILED, error=exc.message[:500])
        logger.warning("Forwarding message %s of channel %s failed: %s", message.pk, channel.pk, exc.message)
        return "failed"
    try:
        with transaction.atomic():
            outbound = ChannelMessage.objects.create(
                channel=channel, direction=Direction.OUTBOUND, content=reply.text, sender=message.sender,
                reply_to=message, metadata={"conversation": reply.conversation, "inReplyTo": str(message.pk)},
            )
            ChannelMessage.objects.filter(pk=message.pk).update(state=MessageState.ANSWERED, error="")
            task_named(REPLY_TASK).delay_on_commit(str(outbound.pk))
    except IntegrityError:
        # Another task answered it while this one ran (a claim taken over from a worker that was
        # slow, not dead): that reply stands, this one is dropped.
        ChannelMessage.objects.filter(pk=message.pk).update(state=MessageState.ANSWERED, error="")
        logger.info("Message %s of channel %s was answered by another task; reply dropped.", message.pk, channel.pk)
        return "skipped"
    return "answered"


def stale_inbound_requeue() -> int:
    """Queue inbound messages a lost task left behind: claims that expired (a killed worker whose
    task the broker dropped) and pending messages of running agents older than a claim lasts
    (their task was lost before it ran). The forward's claim makes a double queueing harmless."""
    now = timezone.now()
    stale = now - claim_expiry()
    rows = ChannelMessage.objects.filter(direction=Direction.INBOUND).filter(
        (Q(state=MessageState.FORWARDING) & (Q(claimed_at__lt=stale) | Q(claimed_at__isnull=True)))
        | Q(state=MessageState.PENDING, created_at__lt=stale, channel__agent__status__in=SERVING),
    )
    ids = [str(pk) for pk in rows.values_list("pk", flat=True)[:SWEEP_BATCH]]
    for message_id in ids:
        task_named(FORWARD_TASK).delay_on_commit(message_id)
    return len(ids)


def reply_send(*, message_id) -> bool:
    """Send an outbound reply through the channel's adapter, once."""
    claimed = ChannelMessage.objects.filter(pk=message_id, direction=Direction.OUTBOUND,
                                            state=MessageState.PENDING).update(state=MessageState.FORWARDING,
                                                                               attempts=F("attempts") + 1)
    if not claimed:
        return False
    message = ChannelMessage.objects.select_related("channel").get(pk=message_id)
    result = legacy_channel_send(channel=message.channel, text=message.content, target=message.sender)
    metadata = {**message.metadata, **({"delivery": result.detail} if result.detail else {})}
    ChannelMessage.objects.filter(pk=message.pk).update(
        state=MessageState.SENT if result.succeeded else MessageState.FAILED, error=result.error, metadata=metadata)
    if not result.succeeded:
        logger.warning("Reply %s of channel %s was not delivered: %s", message.pk, message.channel_id, result.error)
    return result.succeeded


def pending_inbound_requeue(*, agent: Agent) -> int:
    """Queue every pending inbound message of the agent's channels (its runtime is up again)."""
    ids = [str(pk) for pk in ChannelMessage.objects.filter(
        channel__agent=agent, direction=Direction.INBOUND, state=MessageState.PENDING).values_list("pk", flat=True)]
    for message_id in ids:
        task_named(FORWARD_TASK).delay_on_commit(message_id)
    return len(ids)
