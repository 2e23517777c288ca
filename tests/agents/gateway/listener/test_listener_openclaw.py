"""The gateway listener against a real OpenClaw 2026.9.6 (one container for the module): it holds
the connections hooks want and no other, the runtime routes exec approvals to it, it lets go of
an agent that stops, logs a refused token once, stops on SIGTERM, opens a wider connection when
another hook comes to want an agent, and reconnects after a restart.

The restart test comes last: it restarts the module's container.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import threading
import time
from datetime import UTC, datetime

import pytest
from django.core.management import call_command

from agents.gateway import gateway_for, register_listener_hook
from agents.gateway.listener import Backoff, Shard, Supervisor, last_event
from agents.gateway.protocol import ADMIN, APPROVAL_CAPS, APPROVALS, READ
from agents.models import Agent
from tests.infra.fake_model import ANSWER
from tests.infra.listener import QUICK
from tests.support import wait_until

pytestmark = [pytest.mark.runtime, pytest.mark.django_db(transaction=True)]

EVENTS = {"exec.approval.requested", "exec.approval.resolved", "shutdown"}


def _want_held(calls, name: str = "tests.held"):
    """A hook as the sandbox app would register it, wanting the agents named held-*."""
    return register_listener_hook(name, events=EVENTS, wants=lambda agents: agents.filter(name__startswith="held-"),
                                  scopes={ADMIN, APPROVALS}, caps=set(APPROVAL_CAPS), handler=calls)


def _held(listener, agent):
    """The agent's link once it holds a connection."""
    return wait_until(lambda: (link := listener.link(agent.pk)) is not None and link.connected and link,
                      timeout=30, interval=0.05)


def _explode(agent_id, event, payload):
    raise RuntimeError("a hook with a bug")


def test_the_listener_holds_the_agent_a_hook_wants_with_its_grant_and_no_other(
        openclaw_runtime, calls, running_listener):
    held, other = openclaw_runtime.agent(name="held-1"), openclaw_runtime.agent(name="other-1")
    _want_held(calls)

    with running_listener() as listener:
        link = _held(listener, held)
        connection = link.connection
        time.sleep(0.7)  # two more refreshes: still one connection, still none for the other agent

        assert set(listener.supervisor.links) == {str(held.pk)}
        assert link.connects == 1
        granted = connection.hello["auth"]["scopes"]
        assert {"operator.admin", "operator.approvals"} <= set(granted)

    assert connection.closed  # stopping the listener closed it
    assert last_event(held.pk)[1] == "hello"  # the handshake is a sign of life
    assert last_event(other.pk) is None


def test_an_exec_approval_reaches_the_hook_through_the_listeners_connection(
        openclaw_runtime, fake_model, calls, running_listener, caplog):
    agent = openclaw_runtime.agent(name="held-approvals")
    _want_held(calls)
    register_listener_hook("tests.broken", events={"exec.approval.requested"}, wants=lambda agents: agents,
                           handler=_explode)
    gateway = gateway_for(agent)
    gateway.config_patch({"tools": {"exec": {"mode": "ask"}}})
    # The image has no coreutils: OpenClaw only asks about commands it resolves to a file.
    fake_model.offer_tool_call("node --version")
    outcome = {}
    runner = threading.Thread(target=lambda: outcome.update(
        reply=gateway.send_message("Run the check.", conversation="listener-approval", timeout=90)))
    try:
        # The listener is the only operator.admin client with the approval caps: without it the
        # runtime would deny the command at once ("no-route").
        with running_listener() as listener:
            link = _held(listener, agent)
            wait_until(lambda: last_event(agent.pk), timeout=5, interval=0.05)  # the hello's
            held_at = datetime.now(UTC)
            runner.start()

            (requested,) = wait_until(lambda: calls.of("exec.approval.requested", agent.pk), timeout=60, interval=0.1)
            assert requested["request"]["command"] == "node --version"
            assert "allow-once" in requested["request"]["allowedDecisions"]
            gateway.approval_resolve(requested["id"], "allow-once")
            (resolved,) = wait_until(lambda: calls.of("exec.approval.resolved", agent.pk), timeout=30, interval=0.1)
            runner.join(timeout=60)

            assert resolved["id"] == requested["id"]
            assert (link.connects, link.connected) == (1, True)  # the broken hook cost nothing
            assert last_event(agent.pk)[0] >= held_at  # every event is a sign of life, not only the hello
    finally:
        gateway.config_patch({"tools": {"exec": {"mode": "full"}}})
        if runner.is_alive() or runner.ident:
            runner.join(timeout=30)
    assert outcome["reply"].text == ANSWER  # the command ran and the model answered after it
    assert "Listener hook tests.broken failed on exec.approval.requested" in caplog.text


def test_an_agent_that_stops_running_is_let_go_within_one_refresh(openclaw_runtime, calls, running_listener):
    agent = openclaw_runtime.agent(name="held-stopping")
    _want_held(calls)

    # Timed refreshes far apart: the one refresh after the change is the test's own, so "within
    # one refresh" is counted in refreshes, not in seconds a loaded machine may stretch.
    with running_listener(refresh_seconds=600) as listener:
        connection = _held(listener, agent).connection
        Agent.objects.filter(pk=agent.pk).update(status="stopped")

        listener.refresh_now()

        assert listener.link(agent.pk) is None
        assert connection.closed


def test_the_command_once_connects_each_wanted_agent_reports_and_exits(openclaw_runtime, calls, capsys):
    agent = openclaw_runtime.agent(name="held-once")
    openclaw_runtime.agent(name="other-once")
    _want_held(calls)

    call_command("gateway_listener", "--once")

    assert capsys.readouterr().out.splitlines() == ["shard 0/1: wanted 1, connected 1"]
    assert last_event(agent.pk)[1] == "hello"


def test_a_refused_token_is_logged_once_without_the_token_and_retried_only_after_the_long_wait(
        openclaw_runtime, calls, running_listener, caplog):
    wrong = "Wr0ng-" + openclaw_runtime.token[6:]
    agent = openclaw_runtime.agent(name="held-wrong-token", gateway_token=wrong)
    _want_held(calls)
    policy = Backoff(base=0.1, cap=0.5, refused=2.0)  # a quick retry would come within 0.5 s

    with caplog.at_level(logging.INFO, logger="agents.gateway"), running_listener(backoff=policy) as listener:
        def refused(times: int):
            link = listener.link(agent.pk)
            return link is not None and link.failures >= times and time.monotonic()

        first = wait_until(lambda: refused(1), timeout=30, interval=0.02)
        second = wait_until(lambda: refused(2), timeout=30, interval=0.02)
        link = listener.link(agent.pk)

    assert second - first >= 1.8
    assert (link.connects, link.connected) == (0, False)
    assert "refused the agent's token" in link.last_error
    refusals = [r for r in caplog.records if "refused the listener" in r.getMessage()]
    assert [r.levelno for r in refusals] == [logging.WARNING]
    assert wrong not in caplog.text and openclaw_runtime.token not in caplog.text


def test_sigterm_closes_every_connection_and_ends_the_listener(openclaw_runtime, calls):
    agent = openclaw_runtime.agent(name="held-sigterm")
    _want_held(calls)
    supervisor = Supervisor(shard=Shard(), refresh_seconds=0.3, backoff=QUICK)
    held = {}

    def terminate_once_held():
        try:
            link = wait_until(lambda: (found := supervisor.links.get(str(agent.pk))) is not None and found.connected
                              and found, timeout=30, interval=0.05)
            held["connection"] = link.connection
            # Only once the listener handles SIGTERM: the default action would end pytest itself.
            assert signal.getsignal(signal.SIGTERM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
            os.kill(os.getpid(), signal.SIGTERM)
        except BaseException as exc:
            held["error"] = exc
            supervisor.stop_threadsafe()

    killer = threading.Thread(target=terminate_once_held)
    killer.start()
    asyncio.run(asyncio.wait_for(supervisor.run(), timeout=60))  # on the main thread, as the command runs it
    killer.join(timeout=10)

    assert "error" not in held, held
    assert held["connection"].closed
    assert supervisor.links == {}
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is gone with the listener


def test_a_second_hook_wanting_the_agent_gets_it_a_new_connection_with_both_grants(
        openclaw_runtime, calls, running_listener):
    agent = openclaw_runtime.agent(name="held-regrant")
    register_listener_hook("tests.config", events={"config.changed"}, scopes={READ}, handler=calls,
                           wants=lambda agents: agents.filter(name="held-regrant"))

    with running_listener() as listener:
        first = _held(listener, agent)
        assert first.connection.hello["auth"]["scopes"] == ["operator.read"]

        _want_held(calls)
        second = wait_until(lambda: (link := listener.link(agent.pk)) is not first and link is not None
                            and link.connected and link, timeout=10, interval=0.05)
        granted = set(second.connection.hello["auth"]["scopes"])
        assert {"operator.read", "operator.admin", "operator.approvals"} <= granted
        assert first.connection is None  # the narrower connection was closed

        gateway_for(agent).config_patch({"update": {"channel": "beta"}})
        (changed,) = wait_until(lambda: calls.of("config.changed", agent.pk), timeout=15, interval=0.05)

    assert changed["hash"]


def test_after_the_runtime_restarts_the_listener_reconnects(openclaw_runtime, calls, running_listener):
    agent = openclaw_runtime.agent(name="held-restart")
    _want_held(calls)

    with running_listener() as listener:
        link = _held(listener, agent)

        openclaw_runtime.container.restart(timeout=30)  # SIGTERM: OpenClaw says `shutdown`, closes 1012

        wait_until(lambda: calls.of("shutdown", agent.pk), timeout=30, interval=0.1)
        wait_until(lambda: link.connects == 2 and link.connected, timeout=90, interval=0.2)
        assert listener.link(agent.pk) is link  # the same link, reconnected; not a new one
