"""Settling a call: the provider's own figures recorded once (the call's request id is the usage
event's, so settling twice records it once), its reservation released, its tokens counted
against the minute's limit, its outcome counted in the traffic. Runs in Django's thread."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from agents.models import Agent, RateSource
from agents.usage.services import usage_ingest
from agents.usage.validation import UsageInput

from . import limits
from .admission import Admission
from .models import Reservation
from .traffic import traffic_count
from .wire import Usage


def usage_request_id(admission: Admission) -> str:
    return f"gw-{admission.request_id}"


def settle(*, admission: Admission, usage: Usage | None, outcome: str) -> None:
    now = timezone.now()
    with transaction.atomic():
        if usage is not None:
            event = UsageInput(request_id=usage_request_id(admission), model=admission.model,
                               provider=admission.provider, input_tokens=usage.input_tokens,
                               output_tokens=usage.output_tokens, cost_usd=None, occurred_at=now)
            usage_ingest(agent=Agent(pk=admission.agent_id), events=[event], now=now, counted_by=RateSource.GATEWAY)
        Reservation.objects.filter(pk=admission.request_id).delete()
        traffic_count(agent_id=admission.agent_id, outcome=outcome, at=now)
    if usage is not None and admission.counts_tokens:
        limits.tokens_add(admission.agent_id, usage.input_tokens + usage.output_tokens)
