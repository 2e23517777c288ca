"""Settling calls: the provider's own figures recorded once (the call's request id is the usage
event's, so settling twice records it once), the reservations released (a call admitted against
an allowance takes its worst case off the allowance's row: allowances.py), the tokens counted
against the minute's limit, the outcomes counted in the traffic. Runs in the settling thread, for
many calls at once (the edge gathers the calls that ended meanwhile: settle.py), in one
transaction; should that fail, call by call, so one bad call cannot lose the others. Calls the
database was away for are handed back, and settle.py tries them again."""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from agents.models import Agent, RateSource
from agents.usage.services import usage_ingest
from agents.usage.validation import UsageInput
from fleet.api.errors import DATABASE_AWAY

from . import allowances, limits
from .admission import Admission
from .models import Reservation
from .traffic import traffic_count
from .wire import Usage

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ended:
    """A call that ended: its admission, the provider's figures (None: none came), its outcome."""

    admission: Admission
    usage: Usage | None
    outcome: str
    at: datetime = field(default_factory=timezone.now)  # when it ended: the time of its usage


def usage_request_id(admission: Admission) -> str:
    return f"gw-{admission.request_id}"


def settle(calls: list[Ended]) -> list[Ended]:
    """Settle `calls`; the ones the database was away for come back, to be settled again (a
    call settled twice is metered once). A call that fails otherwise is logged and left: its
    reservation lapses by itself."""
    try:
        _settle(calls)
        return []
    except DATABASE_AWAY:  # every call would fail alike
        return calls
    except Exception:
        if len(calls) == 1:
            logger.exception("Settling model call %s failed", calls[0].admission.request_id)
            return []
        logger.exception("Settling %d model calls together failed; settling them one by one", len(calls))
    return [left for call in calls for left in settle([call])]


def _settle(calls: list[Ended]) -> None:
    now = timezone.now()
    events = defaultdict(list)
    for call in calls:
        if call.usage is not None:
            a = call.admission
            events[a.agent_id].append(UsageInput(
                request_id=usage_request_id(a), model=a.model, provider=a.provider,
                input_tokens=call.usage.input_tokens, output_tokens=call.usage.output_tokens, cost_usd=None,
                occurred_at=call.at))
    taken = Counter()  # allowance id -> the worst cases of its calls settled here
    for call in calls:
        if call.admission.allowance_id is not None:
            taken[call.admission.allowance_id] += call.admission.reserved_micros
    with allowances.settling(taken) as rows, transaction.atomic():
        for agent_id, agent_events in events.items():
            usage_ingest(agent=Agent(pk=agent_id), events=agent_events, now=now, counted_by=RateSource.GATEWAY)
        Reservation.objects.filter(pk__in=[c.admission.request_id for c in calls
                                           if c.admission.allowance_id is None]).delete()
        for allowance_id, held in rows.items():
            Reservation.objects.filter(pk=allowance_id).update(worst_micros=held)
        for (agent_id, outcome), count in Counter((c.admission.agent_id, c.outcome) for c in calls).items():
            traffic_count(agent_id=agent_id, outcome=outcome, at=now, count=count)
    for call in calls:
        if call.usage is not None and call.admission.counts_tokens:
            limits.tokens_add(call.admission.agent_id, call.usage.input_tokens + call.usage.output_tokens)
