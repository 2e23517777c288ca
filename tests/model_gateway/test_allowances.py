"""A web process's allowance for an agent with budgets (model_gateway/allowances.py): granted
after a call reserved on its own, its calls admitted against it in memory, its row never holding
less than what they may still cost, and given back when it is idle, when the budgets change or
when a call of its agent is refused the room it holds. What is spent and held together never
passes a cap, whatever order calls are admitted, settled and reserved by another process."""

from __future__ import annotations

import json
import random
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection
from django.utils import timezone

from agents.budgets.selectors import budget_states
from agents.models import RateSource, UsageEvent
from model_gateway import allowances
from model_gateway.admission import Admission, admit
from model_gateway.calls import worst_case_micros
from model_gateway.models import Reservation
from model_gateway.reservations import Shortfall, reserve
from model_gateway.settlement import Ended, settle
from model_gateway.wire import ROUTES, Usage
from tests.factories.agents import make_budget
from tests.infra.web_server import procfile_web_server
from tests.support import wait_until

from .support import route_through_gateway

pytestmark = [pytest.mark.django_db,
              pytest.mark.skipif(connection.vendor != "postgresql", reason="allowances are granted on PostgreSQL")]

CHAT = ROUTES[("POST", "/chat/completions")]
BODY = json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}],
                   "max_tokens": 50}).encode()
WORST = len(BODY) + 50 * 2  # micros at 1 and 2 USD per million tokens (tests/model_gateway/support.py)
IDLE_SECONDS = 4
USED = Usage(input_tokens=20, output_tokens=10)  # 40 micros; the fake model's answer costs 180


@pytest.fixture
def allowance_calls(settings):
    """The size of a first allowance, in calls. Allowances stay open while a test runs, however
    slowly (the tests that close one for being idle say so)."""
    settings.MODEL_GATEWAY_ALLOWANCE_CALLS = 4 * allowances.FIRST_CALLS
    settings.MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS = settings.MODEL_GATEWAY_ALLOWANCE_SECONDS = 600
    return allowances.FIRST_CALLS


def _admit(routed, body: bytes = BODY) -> Admission:
    return admit(route=CHAT, token=routed.token, raw_body=body, sent_headers={})


def _settle(*calls: Admission) -> None:
    assert settle([Ended(call, USED, "forwarded") for call in calls]) == []


def _rows(agent) -> dict[uuid.UUID, int]:
    return dict(Reservation.objects.filter(agent=agent).values_list("id", "worst_micros"))


def _metered(agent) -> int:
    return UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY).count()


def _spent(agent) -> int:
    return sum(UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY)
               .values_list("cost_micros", flat=True))


def _granted(routed) -> Admission:
    """A call reserved on its own, settled, and the allowance it asked for granted."""
    first = _admit(routed)
    assert first.allowance_id is None and _rows(routed.agent) == {first.request_id: WORST}
    _settle(first)
    allowances.tend()
    return first


def test_the_calls_after_one_reserved_on_its_own_are_admitted_against_an_allowance(routed, allowance_calls):
    assert worst_case_micros(model="fleet-fake-1", provider="openai-compatible", input_bound=len(BODY),
                             output_bound=50) == WORST
    make_budget(routed.agent, limit_usd=10)
    _granted(routed)
    [(allowance_id, held)] = _rows(routed.agent).items()
    assert held == allowance_calls * WORST

    calls = [_admit(routed) for _ in range(3)]
    assert {c.allowance_id for c in calls} == {allowance_id}
    assert all(c.reserved_micros == WORST for c in calls)
    assert _rows(routed.agent) == {allowance_id: held}  # no reservation of their own
    _settle(*calls[:2])
    assert _rows(routed.agent) == {allowance_id: held - 2 * WORST}  # what the third may still cost stays
    _settle(calls[2])
    assert _rows(routed.agent) == {allowance_id: held - 3 * WORST}


def test_an_allowance_is_half_the_room_at_most_and_none_when_that_holds_under_two_calls(routed, allowance_calls):
    budget = make_budget(routed.agent, limit_usd=0.002)  # 2,000 micros: half holds 5 calls, not 8
    first = _granted(routed)
    spent = 40  # the first call, settled
    [held] = _rows(routed.agent).values()
    assert held == (2000 - spent) // 2

    assert allowances.give_back(routed.agent.pk)
    assert _rows(routed.agent) == {}
    budget.limit_micros = spent + 4 * WORST - 1  # half the room is under two calls
    budget.save()
    second = _admit(routed)
    assert second.allowance_id is None and second.request_id != first.request_id
    _settle(second)
    allowances.tend()
    assert _rows(routed.agent) == {}
    assert _admit(routed).allowance_id is None


def test_an_allowance_that_runs_low_is_followed_by_one_twice_its_size_up_to_the_most(routed, allowance_calls,
                                                                                    settings):
    make_budget(routed.agent, limit_usd=10)
    _granted(routed)
    sizes = []
    for _ in range(4):
        [held] = [h for i, h in _rows(routed.agent).items()]
        sizes.append(held // WORST)
        calls = [_admit(routed) for _ in range(held // WORST - 1)]  # one call's room left: low
        assert {c.allowance_id for c in calls} == set(_rows(routed.agent))
        allowances.tend()  # closed, cut down to its calls in flight, another granted
        assert len(_rows(routed.agent)) == 2
        _settle(*calls)
        allowances.tend()
    assert sizes == [allowance_calls, 2 * allowance_calls, 4 * allowance_calls, settings.MODEL_GATEWAY_ALLOWANCE_CALLS]


def test_a_change_to_the_budgets_closes_the_allowance_before_its_next_call(routed, allowance_calls):
    budget = make_budget(routed.agent, limit_usd=10)
    _granted(routed)
    [allowance_id] = _rows(routed.agent)
    in_flight = _admit(routed)
    assert in_flight.allowance_id == allowance_id

    budget.limit_micros = 100 + 2 * WORST  # lowered: the allowance was granted under the old cap
    budget.save()
    after = _admit(routed)
    assert after.allowance_id is None  # reserved on its own, against the new cap
    assert _rows(routed.agent)[after.request_id] == WORST
    allowances.tend()
    assert _rows(routed.agent)[allowance_id] == WORST  # cut down to its call in flight
    _settle(in_flight)
    allowances.tend()
    assert allowance_id not in _rows(routed.agent)


def test_an_allowance_left_unused_goes_back_with_its_last_call(routed, allowance_calls, settings):
    make_budget(routed.agent, limit_usd=10)
    _granted(routed)
    [allowance_id] = _rows(routed.agent)
    in_flight = _admit(routed)
    settings.MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS = 0
    allowances.tend()
    assert _rows(routed.agent) == {allowance_id: WORST}
    assert _admit(routed).allowance_id is None  # closed: the next call is reserved on its own
    _settle(in_flight)
    allowances.tend()
    assert allowance_id not in _rows(routed.agent)
    assert not allowances._closed


def test_a_call_refused_the_room_its_own_allowance_holds_is_admitted_once_it_goes_back(routed, allowance_calls):
    make_budget(routed.agent, limit_usd=0.01)  # 10,000 micros
    _granted(routed)
    [allowance_id] = _rows(routed.agent)
    assert _rows(routed.agent)[allowance_id] == allowance_calls * WORST  # 1,536 held of 9,960 left
    big = json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}],
                      "max_tokens": 4500}).encode()  # 9,000+ micros: fits in what is left, not beside the allowance
    admitted = _admit(routed, big)
    assert admitted.allowance_id is None
    assert _rows(routed.agent) == {admitted.request_id: admitted.reserved_micros}


def test_an_allowance_closed_by_a_call_while_the_rounds_cut_others_is_cut_at_the_next_round(
        routed, allowance_calls, tenancy, fake_provider, monkeypatch):
    """A call closes an allowance (its budgets changed) while the settling thread's round is
    cutting another one down: the round does not take it for one cut to nothing, and the next
    round gives its room back."""
    other = route_through_gateway(tenancy.agent(status="running", owner=tenancy.editor),
                                  base_url=fake_provider.base_url)
    budgets = {r.agent.pk: make_budget(r.agent, limit_usd=10) for r in (routed, other)}
    _granted(routed)
    _granted(other)
    [mine] = _rows(routed.agent)
    [theirs] = _rows(other.agent)
    budgets[routed.agent.pk].save()  # a change: the next call closes this allowance, its row left to the round
    assert _admit(routed).allowance_id is None

    cut = allowances._cut

    def cut_while_a_call_closes_the_other(allowance):
        if allowance.id == mine:
            budgets[other.agent.pk].save()
            assert _admit(other).allowance_id is None  # closed now, its row not yet cut
        cut(allowance)

    monkeypatch.setattr(allowances, "_cut", cut_while_a_call_closes_the_other)
    allowances.tend()
    assert mine not in _rows(routed.agent)
    assert _rows(other.agent)[theirs] == allowance_calls * WORST and theirs in allowances._closed
    monkeypatch.setattr(allowances, "_cut", cut)
    allowances.tend()
    assert theirs not in _rows(other.agent) and theirs not in allowances._closed


def test_what_is_spent_and_held_never_passes_the_cap(routed, allowance_calls):
    """This process's calls (some against allowances) and another process's (each reserved on its
    own) admitted, settled and tended in a random order: after every step what the budget has
    spent and what every call not yet settled may still cost stay within the cap, and every
    allowance's row holds at least what its calls may still cost."""
    limit = 60 * WORST
    make_budget(routed.agent, limit_usd=limit / 1_000_000)
    steps = random.Random(20261129)
    ours: list[Admission] = []
    theirs: list[Admission] = []
    refused = against_allowances = 0
    for _ in range(400):
        step = steps.random()
        if step < 0.4:
            try:
                ours.append(_admit(routed))
                against_allowances += ours[-1].allowance_id is not None
            except Exception as error:
                assert getattr(error, "code", "") == "budget_exceeded"
                refused += 1
        elif step < 0.55:
            request_id = uuid.uuid4()
            if not isinstance(reserve(agent_id=routed.agent.pk, request_id=request_id, worst_micros=WORST,
                                      now=timezone.now()), Shortfall):
                theirs.append(Admission(request_id, routed.agent.pk, "openai-compatible", "fleet-fake-1", "", {}, b"",
                                        WORST))
        elif step < 0.85 and (ours or theirs):
            pool = ours if ours and (not theirs or steps.random() < 0.6) else theirs
            _settle(pool.pop(steps.randrange(len(pool))))
        else:
            allowances.tend()
        [state] = budget_states(now=timezone.now(), agent_ids=[routed.agent.pk])
        in_flight = sum(c.reserved_micros for c in (*ours, *theirs))
        assert state.spent_micros + in_flight <= limit
        rows = _rows(routed.agent)
        for allowance_id, held in rows.items():
            assert held >= sum(c.reserved_micros for c in ours if c.allowance_id == allowance_id)
        assert state.spent_micros + sum(rows.values()) <= limit
    assert refused and against_allowances  # both happened


@pytest.mark.django_db(transaction=True)
def test_the_web_server_admits_against_its_allowance_and_gives_it_back_when_idle(tmp_path, routed, fake_provider):
    """The Procfile's web server, one worker: after a first call, its next calls hold no
    reservation of their own while the provider holds them; their allowance goes back once the
    calls stop. Unused for IDLE_SECONDS it goes back: longer than the default, so that a test
    process slowed by the rest of the suite does not see it go back before the held calls."""
    make_budget(routed.agent, limit_usd=10)
    with procfile_web_server(tmp_path, env={"OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "WEB_CONCURRENCY": "1",
                                            "LOG_LEVEL": "WARNING",
                                            "MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS": str(IDLE_SECONDS)}) as url:
        def call() -> int:
            answer = requests.post(f"{url}/llm/v1/chat/completions", data=BODY, headers=routed.auth, timeout=30)
            return answer.status_code

        assert call() == 200
        # The first call settled, then its allowance granted (the settling thread's next step).
        granted = allowances.FIRST_CALLS * WORST
        wait_until(lambda: _metered(routed.agent) == 1 and list(_rows(routed.agent).values()) == [granted],
                   timeout=10, interval=0.05)
        [(allowance_id, held)] = _rows(routed.agent).items()

        fake_provider.hold()
        with ThreadPoolExecutor(max_workers=3) as pool:
            pending = [pool.submit(call) for _ in range(3)]
            wait_until(lambda: len(fake_provider.requests) == 4, timeout=10, interval=0.05)
            assert _rows(routed.agent) == {allowance_id: held}  # three calls in flight, no row of their own
            fake_provider.release()
            assert [f.result() for f in pending] == [200] * 3
        wait_until(lambda: _metered(routed.agent) == 4, timeout=10, interval=0.05)
        wait_until(lambda: _rows(routed.agent) == {}, timeout=3 * IDLE_SECONDS, interval=0.1)  # idle: given back
        assert _spent(routed.agent) == 4 * 180  # the fake model's figures: 120 in, 30 out
