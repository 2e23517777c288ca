"""`runtime_not_ready`: the one rule for which gateway failures background work waits out."""

from __future__ import annotations

import pytest

from agents.gateway import (
    AgentNotRunning,
    GatewayAuthRefused,
    GatewayDropped,
    GatewayError,
    GatewayProtocolError,
    GatewayUnreachable,
    runtime_not_ready,
)
from fleet.errors import DaemonUnreachable


@pytest.mark.parametrize("error", [
    GatewayUnreachable("blocked address"),
    GatewayDropped("refused"),
    GatewayError("gateway starting; retry shortly", retryable=True),
], ids=["unreachable", "dropped", "starting"])
def test_down_restarting_or_starting_may_succeed_later(error):
    assert runtime_not_ready(error)


@pytest.mark.parametrize("error", [
    GatewayError("invalid config"),
    GatewayAuthRefused(),
    GatewayProtocolError("protocol 2"),
    AgentNotRunning(),
    DaemonUnreachable(),
    ValueError("not a gateway failure"),
], ids=["refused", "token", "protocol", "not-running", "daemon", "other"])
def test_a_refusal_or_another_failure_is_not_the_runtimes_not_now(error):
    assert not runtime_not_ready(error)
