"""Room for an agent's next calls, reserved ahead by one web process: its calls are admitted
against it in memory, without the budget lock and a reservation of their own on their path.

An allowance is one reservation row (reservations.grant) sized in calls of the worst case of
the call that asked for it: FIRST_CALLS at first, twice the last one's each time one runs low,
MODEL_GATEWAY_ALLOWANCE_CALLS at most; never more than half the room the agent's tightest
budget has left, and none when that half would not hold two such calls (near a cap, every call
is reserved on its own). While it is open, a call whose worst case fits in what it has left is
admitted against it (`take`). The row counts against the budgets like any reservation, so calls
of other processes see it as held; settling a call takes its worst case off the row and off the
allowance in the same step (settlement.py), so the row always holds at least the worst case of
its calls in flight, and what the budgets see spent plus held never drops below what could
still be spent.

An allowance admits for MODEL_GATEWAY_ALLOWANCE_SECONDS at most; its row lapses
MODEL_GATEWAY_RESERVATION_SECONDS after that, so each call admitted against it is held as long
as a call reserved on its own. It is closed sooner when its agent's budgets change (the
caller's read shows their latest change: a new cap is never run past), when it runs low (fewer
than two calls left), when it stood unused for MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS, or when a
call of its agent is refused a reservation of its own (the room it held for calls to come goes
back first, and that call is tried again). One closed while its agent's calls keep coming (low,
or past its time) is followed by another. A closed allowance's row is cut down to its calls in
flight and goes with the last of them.

Granting, closing and cutting down run in the settling thread (settle.py), never on a call's
path. What an allowance costs: near a cap, another web process's call can be refused while this
one holds room it has not used, for at most MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS after this
process's last call of that agent; the room so held is at most half of what was left when it
was granted.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from .reservations import grant, hold_only

LEAST_CALLS = 2  # an allowance that would not hold two calls is not granted, one that cannot is low
FIRST_CALLS = 8  # the first allowance's size, in calls; doubled each time one runs low


@dataclass
class Allowance:
    id: uuid.UUID
    agent_id: uuid.UUID
    budgets_changed_at: datetime  # the budgets it was granted under (their latest change)
    worst_micros: int  # the worst case of the call it was granted for: its measure of "low"
    calls: int  # the calls of that worst case it was asked for
    held: int  # micros its row holds
    in_flight: int  # worst cases of its calls admitted and not yet settled
    admits_until: float  # time.monotonic()
    lapses_at: float  # time.monotonic(): its row has lapsed
    last_taken: float

    @property
    def left(self) -> int:
        return self.held - self.in_flight


_lock = threading.Lock()  # admission takes in Django's thread, settlement gives back in its own
# Held while an allowance's row is written: only this process writes its allowances' rows, each
# from what this memory says, so the rows are written one after the other (settling in its
# thread, a refusal's give_back in Django's).
_rows_lock = threading.Lock()
_open: dict[uuid.UUID, Allowance] = {}  # agent id -> its open allowance
_closed: dict[uuid.UUID, Allowance] = {}  # allowance id -> closed, its calls not all settled
# agent id -> (the worst case of its call that no allowance held, the calls asked for)
_wanted: dict[uuid.UUID, tuple[int, int]] = {}


def enabled() -> bool:
    return settings.MODEL_GATEWAY_ALLOWANCE_CALLS > 0


def likely_holds(agent_id: uuid.UUID) -> bool:
    """Whether the agent's open allowance looks able to hold a call like the one it was granted
    for (`take` decides, for the call's own worst case)."""
    allowance = _open.get(agent_id)
    return (allowance is not None and allowance.left >= allowance.worst_micros
            and time.monotonic() < allowance.admits_until)


def take(agent_id: uuid.UUID, budgets_changed_at: datetime, worst_micros: int) -> uuid.UUID | None:
    """The id of the allowance this call is admitted against, or None (reserve it on its own;
    `want` asks for an allowance for the next calls)."""
    now = time.monotonic()
    with _lock:
        allowance = _open.get(agent_id)
        if allowance is None:
            return None
        if allowance.budgets_changed_at != budgets_changed_at or now >= allowance.admits_until:
            _close(allowance)
            return None
        if allowance.left < worst_micros:
            return None
        allowance.in_flight += worst_micros
        allowance.last_taken = now
        return allowance.id


def want(agent_id: uuid.UUID, worst_micros: int) -> None:
    """A call of this agent was reserved on its own: the settling thread grants an allowance."""
    if enabled():
        with _lock:
            _ask(agent_id, worst_micros, FIRST_CALLS)


def _ask(agent_id: uuid.UUID, worst_micros: int, calls: int) -> None:
    """Under _lock."""
    asked = _wanted.get(agent_id, (0, 0))
    _wanted[agent_id] = (max(worst_micros, asked[0]), min(max(calls, asked[1]), settings.MODEL_GATEWAY_ALLOWANCE_CALLS))


def _known(allowance_id: uuid.UUID) -> Allowance | None:
    return _closed.get(allowance_id) or next((a for a in _open.values() if a.id == allowance_id), None)


@contextmanager
def settling(taken: dict[uuid.UUID, int]) -> Iterator[dict[uuid.UUID, int]]:
    """For calls settled in the caller's transaction, `taken` the worst cases they took of each
    allowance: yields what each allowance's row holds once they are settled, for that
    transaction to write, and counts them settled here once it committed. Written as values,
    not as differences, so settling again after a commit whose answer was lost writes the same.
    An allowance this process no longer knows has lapsed with its row: nothing to write."""
    with _rows_lock:
        with _lock:
            rows = {i: a.held - taken[i] for i in taken if (a := _known(i)) is not None}
        yield rows
        with _lock:
            for allowance_id, held in rows.items():
                if (allowance := _known(allowance_id)) is not None:
                    allowance.held, allowance.in_flight = held, allowance.in_flight - taken[allowance_id]


def give_back(agent_id: uuid.UUID) -> bool:
    """Close the agent's open allowance and cut the rows of its allowances down to their calls in
    flight now (a call of the agent was refused a reservation of its own, maybe for the room they
    held); whether any room went back."""
    with _rows_lock:
        with _lock:
            if agent_id in _open:
                _close(_open[agent_id])
            holding = [a for a in _closed.values() if a.agent_id == agent_id and a.held > a.in_flight]
        for allowance in holding:
            _cut(allowance)
    return bool(holding)


def _cut(allowance: Allowance) -> None:
    """Under _rows_lock: its row down to its calls in flight (closed: no more are added)."""
    with _lock:
        in_flight = allowance.in_flight
    hold_only(allowance.id, in_flight)
    with _lock:
        allowance.held = in_flight


def anything_to_tend() -> bool:
    """An allowance open, closed with its row not yet gone, or wanted."""
    return bool(_open or _closed or _wanted)


def tend(*, closing_all: bool = False) -> None:
    """The settling thread's rounds: close the allowances that are idle, low or past their time
    (all of them with `closing_all`), grant the ones wanted, cut closed rows down to their
    calls in flight."""
    now = time.monotonic()
    with _lock:
        for allowance in list(_open.values()):
            low = allowance.left < allowance.worst_micros * LEAST_CALLS
            idle = now - allowance.last_taken >= settings.MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS
            past = now >= allowance.admits_until
            if closing_all or low or idle or past:
                _close(allowance)
            if not (closing_all or idle) and (low or past):  # calls keep coming: another, larger when low
                _ask(allowance.agent_id, allowance.worst_micros, allowance.calls * (2 if low else 1))
        wanted = {} if closing_all else dict(_wanted)
        _wanted.clear()
        cuts = [a for a in _closed.values() if a.held > a.in_flight or not a.in_flight]
    with _rows_lock:
        for allowance in cuts:
            _cut(allowance)
    emptied = {a.id for a in cuts if not a.held}
    with _lock:  # gone with its row (cut to nothing here), or lapsed with it (a call never settled)
        for allowance_id in [i for i, a in _closed.items() if i in emptied or now >= a.lapses_at]:
            del _closed[allowance_id]
    for agent_id, (worst, calls) in wanted.items():
        if agent_id not in _open:
            _grant(agent_id, worst, calls)


def _close(allowance: Allowance) -> None:
    """Under _lock: it admits no more calls."""
    if _open.get(allowance.agent_id) is allowance:
        del _open[allowance.agent_id]
    _closed[allowance.id] = allowance


def _grant(agent_id: uuid.UUID, worst_micros: int, calls: int) -> None:
    now, started = timezone.now(), time.monotonic()
    admits = settings.MODEL_GATEWAY_ALLOWANCE_SECONDS
    lapses = admits + settings.MODEL_GATEWAY_RESERVATION_SECONDS
    allowance_id = uuid.uuid4()
    granted = grant(agent_id=agent_id, allowance_id=allowance_id,
                    target_micros=worst_micros * calls,
                    least_micros=worst_micros * LEAST_CALLS, now=now, lapses=now + timedelta(seconds=lapses))
    if granted is None:
        return
    micros, budgets_changed_at = granted
    with _lock:
        _open[agent_id] = Allowance(allowance_id, agent_id, budgets_changed_at, worst_micros, calls, held=micros,
                                    in_flight=0, admits_until=started + admits, lapses_at=started + lapses,
                                    last_taken=started)
