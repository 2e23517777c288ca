"""Attempting deliveries: claim, send, record, and schedule the next attempt.

A delivery is claimed with one conditional UPDATE (pending and due, or sending with an expired
lease); only the worker whose UPDATE changed the row sends it, so no two workers send one
delivery. A worker killed mid-send leaves the row "sending" until its lease expires; the task
message comes back (acks_late) or the sweep re-enqueues it, and the next claim takes it over.

Retries: 6 attempts - now, then 10 s, 1 min, 5 min, 30 min and 2 h after
the previous failure (ALERT_RETRY_DELAYS_SECONDS, shortened by the fault tests). 2xx succeeds;
410 and every other 4xx but 408/429 end the delivery at once.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from ..models import AlertRule, ChannelType, Delivery, DeliveryAttempt, DeliveryStatus
from ..payload import delivery_payload, payload_json
from ..transports import SendResult, send_email, send_webhook
from .enqueue import deliveries_enqueue_on_commit
from .fanout import FAN_OUT_GRACE, events_fan_out_and_publish

logger = logging.getLogger(__name__)

RETRY_DELAYS = tuple(timedelta(seconds=seconds) for seconds in settings.ALERT_RETRY_DELAYS_SECONDS)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
# Longer than one send can take (10 s timeout, up to 3 redirects) with room to spare.
CLAIM_LEASE = timedelta(minutes=2)
# A pending delivery this far past due has lost its queued task; the sweep enqueues it again.
SWEEP_GRACE = timedelta(minutes=1)


def delivery_claim(*, delivery_id, now: datetime) -> bool:
    """Take the delivery for one attempt; True only for the one caller whose UPDATE changed it."""
    claimable = Q(status=DeliveryStatus.PENDING) | Q(status=DeliveryStatus.SENDING, lease_expires_at__lt=now)
    changed = (
        Delivery.objects.filter(claimable, pk=delivery_id, next_attempt_at__lte=now)
        .update(status=DeliveryStatus.SENDING, lease_expires_at=now + CLAIM_LEASE, attempts=F("attempts") + 1)
    )
    return changed == 1


def delivery_attempt(*, delivery_id) -> Delivery | None:
    """Make the delivery's next attempt if it is due and nobody else holds it; None otherwise."""
    started_at = timezone.now()
    if not delivery_claim(delivery_id=delivery_id, now=started_at):
        return None
    delivery = Delivery.objects.select_related("rule__workspace", "channel", "event").filter(pk=delivery_id).first()
    if delivery is None:  # its rule was deleted since the claim
        return None
    clock = time.monotonic()
    result = _send(delivery)
    duration_ms = int((time.monotonic() - clock) * 1000)
    try:
        recorded = _delivery_record(delivery=delivery, result=result, started_at=started_at, duration_ms=duration_ms)
    except IntegrityError:  # deleted between our UPDATE and the attempt's INSERT
        recorded = None
    if recorded is None:
        logger.info("Delivery %s was deleted with its rule while being sent", delivery_id)
    return recorded


def deliveries_attempt(*, delivery_ids) -> None:
    """The next attempt of each delivery in turn (one channel's new deliveries); one that fails
    unexpectedly is logged and the others still get theirs (the sweep takes it up again)."""
    for delivery_id in delivery_ids:
        try:
            delivery_attempt(delivery_id=delivery_id)
        except Exception:
            logger.exception("Delivery %s could not be attempted", delivery_id)


def _send_webhook(channel, delivery: Delivery) -> SendResult:
    return send_webhook(url=channel.config["url"], headers=channel.headers, secret=channel.secret,
                        message_id=str(delivery.id), body=delivery.body.encode("utf-8"))


def _send_email(channel, delivery: Delivery) -> SendResult:
    return send_email(to=channel.config["to"], subject_prefix=channel.config.get("subjectPrefix"),
                      payload=json.loads(delivery.body))


# One row per channel type: a new type is a row here and its transport (alerts.transports).
SENDERS = {ChannelType.WEBHOOK: _send_webhook, ChannelType.EMAIL: _send_email}


def _send(delivery: Delivery) -> SendResult:
    channel = delivery.channel
    if channel is None:
        return SendResult.failure("The channel was removed from the rule.", permanent=True)
    try:
        if delivery.body is None:
            delivery.body = payload_json(delivery_payload(event=delivery.event, rule=delivery.rule))
            Delivery.objects.filter(pk=delivery.pk).update(body=delivery.body)
        return SENDERS[channel.type](channel, delivery)
    except Exception as exc:  # a bug, bad event data or an undecryptable secret must not leave the row claimed
        logger.exception("Delivery %s failed unexpectedly", delivery.id)
        return SendResult.failure(f"Internal error: {type(exc).__name__}", permanent=True)


@transaction.atomic
def _delivery_record(
    *, delivery: Delivery, result: SendResult, started_at: datetime, duration_ms: int
) -> Delivery | None:
    """Store the attempt's outcome; None when the delivery was deleted (with its rule) meanwhile."""
    now = timezone.now()
    delivery.lease_expires_at = None
    if result.succeeded:
        delivery.status, delivery.last_error, delivery.completed_at = DeliveryStatus.SUCCEEDED, None, now
    elif result.permanent or delivery.attempts >= MAX_ATTEMPTS:
        delivery.status, delivery.last_error, delivery.completed_at = DeliveryStatus.FAILED, result.error, now
    else:
        delivery.status, delivery.last_error = DeliveryStatus.PENDING, result.error
        delivery.next_attempt_at = now + RETRY_DELAYS[delivery.attempts - 1]
        delivery.queued_at = now  # the retry's message is published below, not by a dispatch
    fields = ("status", "last_error", "completed_at", "next_attempt_at", "lease_expires_at", "queued_at")
    if not Delivery.objects.filter(pk=delivery.pk).update(**{f: getattr(delivery, f) for f in fields}):
        return None
    DeliveryAttempt.objects.create(
        delivery=delivery,
        number=delivery.attempts,
        started_at=started_at,
        duration_ms=duration_ms,
        status_code=result.status_code,
        succeeded=result.succeeded,
        error=result.error,
    )
    if delivery.channel is not None:  # a removed channel's leftovers say nothing about the rule now
        AlertRule.objects.filter(pk=delivery.rule_id).update(
            last_fired_at=started_at, last_error=None if result.succeeded else _rule_error(delivery, result)
        )
    if delivery.status == DeliveryStatus.PENDING:
        deliveries_enqueue_on_commit([delivery.id], eta=delivery.next_attempt_at)
    return delivery


def _rule_error(delivery: Delivery, result: SendResult) -> str:
    channel = delivery.channel
    target = channel.config.get("url") if channel.type == ChannelType.WEBHOOK else ", ".join(channel.config["to"])
    return f"{channel.type} {target}: {result.error}"


@transaction.atomic
def delivery_resend(*, delivery: Delivery) -> Delivery:
    """Start a failed delivery over with a fresh round of attempts (admin action)."""
    now = timezone.now()
    changed = Delivery.objects.filter(pk=delivery.pk, status=DeliveryStatus.FAILED).update(
        status=DeliveryStatus.PENDING, attempts=0, next_attempt_at=now, completed_at=None, lease_expires_at=None,
        queued_at=now,
    )
    if changed:
        deliveries_enqueue_on_commit([delivery.pk])
    delivery.refresh_from_db()
    return delivery


def deliveries_sweep(*, now: datetime | None = None) -> int:
    """Fan out the events a lost dispatch left waiting (longer than FAN_OUT_GRACE), and
    re-enqueue deliveries whose task was lost (overdue pending, or sending past the lease).
    Called outside any transaction (the minute task); the number of deliveries queued is returned."""
    now = now or timezone.now()
    fanned_out = events_fan_out_and_publish(occurred_before=now - FAN_OUT_GRACE)
    stuck = Delivery.objects.filter(
        Q(status=DeliveryStatus.PENDING, next_attempt_at__lt=now - SWEEP_GRACE)
        | Q(status=DeliveryStatus.SENDING, lease_expires_at__lt=now)
    ).values_list("id", flat=True)[:1000]
    ids = list(stuck)
    if ids:
        Delivery.objects.filter(pk__in=ids, queued_at__isnull=True).update(queued_at=now)  # left by a release before
        deliveries_enqueue_on_commit(ids)
    return fanned_out + len(ids)
