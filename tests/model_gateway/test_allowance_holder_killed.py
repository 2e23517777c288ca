"""The web worker holding an agent's allowance SIGKILLed with calls in flight (docs/reliability.md):
the allowance's reservation goes on counting against the agent's budgets until it lapses
(MODEL_GATEWAY_ALLOWANCE_SECONDS, then MODEL_GATEWAY_RESERVATION_SECONDS, both shortened here),
so no other process can spend the room it held for calls that may still be running at the
provider; then the room comes back. The worker granian starts in its place serves the agent
again and takes an allowance of its own."""

from __future__ import annotations

import json
import os
import signal
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from django.db import connection
from django.utils import timezone

from agents.budgets.selectors import budget_states
from agents.models import RateSource, UsageEvent
from model_gateway.models import Reservation
from model_gateway.reservations import Shortfall, reserve
from tests.factories.agents import make_budget
from tests.infra.web_server import granian_pids, procfile_web_server
from tests.support import wait_until

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(connection.vendor != "postgresql", reason="allowances are granted on PostgreSQL")]

BODY = json.dumps({"model": "fleet-fake-1", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 50})
# Long enough to admit the calls in flight on a machine the rest of the suite slows down.
ADMITS_SECONDS, RESERVATION_SECONDS = 6, 2
RESPAWN_BOUND = 15  # seconds from the kill to a new worker answering (granian waits 3.5 s first)


def _rows(agent) -> dict[uuid.UUID, int]:
    return dict(Reservation.objects.filter(agent=agent, expires_at__gt=timezone.now())
                .values_list("id", "worst_micros"))


def _metered(agent) -> int:
    return UsageEvent.objects.filter(agent=agent, rate_source=RateSource.GATEWAY).count()


def _room(agent) -> int:
    [state] = budget_states(now=timezone.now(), agent_ids=[agent.pk])
    return state.budget.limit_micros - state.spent_micros


def _fits(agent, micros: int) -> bool:
    """Whether a call of `micros` is reserved now, as another web process would (released at once)."""
    request_id = uuid.uuid4()
    if isinstance(reserve(agent_id=agent.pk, request_id=request_id, worst_micros=micros, now=timezone.now()),
                  Shortfall):
        return False
    Reservation.objects.filter(pk=request_id).delete()
    return True


def test_a_killed_workers_allowance_holds_its_room_until_it_lapses(tmp_path, routed, fake_provider):
    make_budget(routed.agent, limit_usd=10)
    env = {"OUTBOUND_ALLOWED_HOSTS": "127.0.0.1", "WEB_CONCURRENCY": "1", "LOG_LEVEL": "WARNING",
           "MODEL_GATEWAY_ALLOWANCE_SECONDS": str(ADMITS_SECONDS),
           "MODEL_GATEWAY_ALLOWANCE_IDLE_SECONDS": str(ADMITS_SECONDS),
           "MODEL_GATEWAY_RESERVATION_SECONDS": str(RESERVATION_SECONDS)}
    with procfile_web_server(tmp_path, env=env) as url:
        def call() -> int:
            answer = requests.post(f"{url}/llm/v1/chat/completions", data=BODY, headers=routed.auth, timeout=30)
            return answer.status_code

        assert call() == 200
        # The first call settled (its own reservation gone in that commit), then its allowance granted.
        wait_until(lambda: _metered(routed.agent) == 1 and len(_rows(routed.agent)) == 1, timeout=10, interval=0.05)
        [(allowance_id, held)] = _rows(routed.agent).items()
        assert held > 2 * len(BODY)  # several calls' worst case
        granted = time.monotonic()
        [victim] = granian_pids(tmp_path / "web.log")[1].values()

        fake_provider.hold()
        with ThreadPoolExecutor(max_workers=2) as pool:
            in_flight = [pool.submit(call) for _ in range(2)]
            wait_until(lambda: len(fake_provider.requests) == 3, timeout=10, interval=0.05)
            assert _rows(routed.agent) == {allowance_id: held}  # the two calls are held by the allowance
            os.kill(victim, signal.SIGKILL)
            for call_in_flight in in_flight:
                with pytest.raises(requests.RequestException):
                    call_in_flight.result()
        fake_provider.release()

        # Until it lapses, the dead worker's room is held: what is left beside it fits, one more micro does not.
        beside = _room(routed.agent) - held
        assert _rows(routed.agent) == {allowance_id: held}
        assert not _fits(routed.agent, beside + 1) and _fits(routed.agent, beside)
        assert time.monotonic() - granted < ADMITS_SECONDS + RESERVATION_SECONDS  # checked before it lapsed

        wait_until(lambda: allowance_id not in _rows(routed.agent), timeout=ADMITS_SECONDS + RESERVATION_SECONDS + 2,
                   interval=0.1)
        assert _fits(routed.agent, beside + 1)  # lapsed: its room is back

        wait_until(lambda: victim not in granian_pids(tmp_path / "web.log")[1].values(), timeout=RESPAWN_BOUND,
                   interval=0.2)
        wait_until(lambda: call() == 200, timeout=RESPAWN_BOUND, interval=0.5)
        wait_until(lambda: len(_rows(routed.agent)) == 1, timeout=10, interval=0.05)
        assert allowance_id not in _rows(routed.agent)  # the new worker's own
