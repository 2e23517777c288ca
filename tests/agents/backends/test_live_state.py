"""LiveState.crash_looping: the one rule the provisioning job and the monitoring sweep read."""

from __future__ import annotations

import pytest

from agents.backends.base import CRASH_LOOP_RESTARTS, LiveState


@pytest.mark.parametrize(("running", "status", "restarts", "looping"), [
    (True, "restarting", CRASH_LOOP_RESTARTS, True),  # Docker says Running while it restarts
    (False, "restarting", CRASH_LOOP_RESTARTS, True),  # a pod in CrashLoopBackOff
    (False, "exited", CRASH_LOOP_RESTARTS, True),
    (True, "restarting", 1, False),  # a first restart (an OOM kill answered by the policy)
    (False, "exited", 0, False),
    (True, "running", 5, False),  # up again after restarts: not looping now
])
def test_a_workload_is_crash_looping_once_it_ended_after_enough_restarts(running, status, restarts, looping):
    state = LiveState(exists=True, running=running, status=status, restart_count=restarts)

    assert state.crash_looping is looping
    assert state.restarting_after_an_end is (status == "restarting" and not looping)
