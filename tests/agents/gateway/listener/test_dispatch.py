"""Handing one event to its hooks: only the hooks named for the agent that listen for that event,
each failure isolated, and the agent's last sign of life recorded in the cache."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from agents.gateway import register_listener_hook
from agents.gateway.listener import last_event
from agents.gateway.listener.dispatch import event_deliver


def _explode(agent_id, event, payload):
    raise RuntimeError("a hook with a bug")


def _hook(name, handler, events=("exec.approval.requested",)):
    register_listener_hook(name, events=set(events), wants=lambda agents: agents, handler=handler)


def test_the_event_goes_to_each_named_hook_that_listens_for_it(calls):
    other = type(calls)()
    _hook("tests.first", calls)
    _hook("tests.config", other, events={"config.changed"})
    _hook("tests.unnamed", other)

    delivered = event_deliver("agent-1", "exec.approval.requested", {"id": "a1"},
                              ("tests.first", "tests.config", "tests.unregistered"))

    assert delivered == 1
    assert calls.of("exec.approval.requested", "agent-1") == [{"id": "a1"}]
    assert other.events() == []  # listens for something else, or was not named for this agent


def test_a_failing_hook_is_logged_and_the_next_hook_still_runs(calls, caplog):
    _hook("tests.broken", _explode)
    _hook("tests.fine", calls)

    with caplog.at_level(logging.ERROR):
        delivered = event_deliver("agent-2", "exec.approval.requested", {"id": "a2"}, ("tests.broken", "tests.fine"))

    assert delivered == 1
    assert calls.of("exec.approval.requested", "agent-2") == [{"id": "a2"}]
    assert "Listener hook tests.broken failed on exec.approval.requested from agent agent-2" in caplog.text


def test_every_delivery_records_the_agents_last_sign_of_life():
    before = datetime.now(UTC)
    assert last_event("agent-3") is None

    event_deliver("agent-3", "tick", {"ts": 1}, ())

    seen_at, event = last_event("agent-3")
    assert event == "tick" and before <= seen_at <= datetime.now(UTC)
