"""Reserving the call of an agent with budgets in the round trip that reads who calls.

Admission reads the agent by its token, then reserves the call's worst case: two round trips,
and on this kind of machine a round trip is mostly the wait for processes to wake up. A web
process remembers, per token, the agent and the provider of the last call it reserved for; the
next call with that token reads its caller and reserves in one round trip
(reservations.reserve_with_read), before the read has said who calls. The read decides: a
reservation it does not confirm (no such agent any more, no budget, another provider's price, a
refusal before the budgets are checked) is deleted and the call is admitted as it would have
been without it. Such a reservation only ever holds room of the agent the token named at its
last call, and only for the moment its admission takes. While the agent has an open allowance
(allowances.py) that looks able to hold its call, nothing is reserved ahead: the read goes alone.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.utils import timezone

from fleet.errors import InvalidRequest

from . import allowances
from .calls import call_body, output_bound, worst_case_micros
from .models import Reservation
from .reservations import Shortfall, reserve_with_read
from .wire import Route

MAX_REMEMBERED = 10_000  # tokens; past that the memory starts again empty

# token digest -> (agent id, provider) of the last call this process reserved for
_remembered: dict[str, tuple[uuid.UUID, str]] = {}


@dataclass(frozen=True)
class Ahead:
    """A call reserved before its caller was read: for whom it was priced, and what came of it."""

    request_id: uuid.UUID
    agent_id: uuid.UUID
    provider: str
    worst_micros: int
    result: int | Shortfall

    def confirms(self, *, agent_id: uuid.UUID, provider: str, worst_micros: int) -> bool:
        return (self.agent_id, self.provider, self.worst_micros) == (agent_id, provider, worst_micros)


def reserve_ahead(route: Route, digest: str, raw_body: bytes, read: tuple[str, list]) -> tuple[Ahead, list] | None:
    """The reservation made with `read` (the caller's statement) and the read's rows, or None
    when this process reserved for no call with this token, or the body names no price (the
    call is admitted the usual way: admission reports what is wrong with it)."""
    remembered = _remembered.get(digest) if route.carries_a_call else None
    if remembered is None:
        return None
    agent_id, provider = remembered
    if allowances.likely_holds(agent_id):  # nothing to reserve: its read goes alone
        return None
    try:
        body = call_body(raw_body)
        bound = output_bound(route, body)
    except InvalidRequest:
        return None
    worst = worst_case_micros(model=body["model"], provider=provider, input_bound=len(raw_body), output_bound=bound)
    if not worst:
        return None
    request_id = uuid.uuid4()
    result, rows = reserve_with_read(read, agent_id=agent_id, request_id=request_id, worst_micros=worst,
                                     now=timezone.now())
    return Ahead(request_id, agent_id, provider, worst, result), rows


def remember(digest: str, agent_id: uuid.UUID, provider: str) -> None:
    """The token's next call is reserved ahead, for this agent at this provider's price."""
    if len(_remembered) >= MAX_REMEMBERED and digest not in _remembered:
        _remembered.clear()
    _remembered[digest] = (agent_id, provider)


def forget(digest: str) -> None:
    _remembered.pop(digest, None)


def release(ahead: Ahead) -> None:
    """Delete a reservation made ahead that its call does not keep (a refusal inserted none)."""
    if not isinstance(ahead.result, Shortfall):
        Reservation.objects.filter(pk=ahead.request_id).delete()
