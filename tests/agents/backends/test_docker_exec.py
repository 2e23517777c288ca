"""DockerBackend.exec against the real engine: an argv run inside the workload, its exit code and
output, the output cap, the timeout and an early stop, and the failures of a missing or
stopped workload."""

from __future__ import annotations

import time

import pytest

from agents.backends import docker_engine
from agents.backends.base import BackendError, WorkloadMissing
from tests.agents.backends.support import FakeAgent, spec_for

pytestmark = pytest.mark.usefixtures("docker_settings")


@pytest.fixture
def running(backend):
    agent = FakeAgent()
    return agent.place(backend.create(agent, spec_for(agent)))


def test_an_argv_runs_as_words_with_its_exit_code_and_output(backend, running):
    result = backend.exec(running, ["echo", "$HOME;", "id", "`x`"], timeout=10, max_output=1000)

    # No shell: the metacharacters come back as the words they were.
    assert result.exit_code == 0
    assert result.output == b"$HOME; id `x`\n"
    assert not result.timed_out and not result.truncated


def test_a_failing_command_gives_its_exit_code_and_stderr(backend, running):
    result = backend.exec(running, ["ls", "/no/such/path"], timeout=10, max_output=1000)

    assert result.exit_code not in (0, None)
    assert b"/no/such/path" in result.output


def test_output_is_capped(backend, running):
    result = backend.exec(running, ["head", "-c", "100000", "/dev/zero"], timeout=10, max_output=1000)

    assert result.exit_code == 0
    assert len(result.output) == 1000 and result.truncated


def test_the_caller_stops_waiting_at_the_timeout(backend, running):
    began = time.monotonic()
    result = backend.exec(running, ["sh", "-c", "echo started; sleep 30"], timeout=1, max_output=1000)

    assert time.monotonic() - began < 5
    assert result.timed_out and result.exit_code is None
    assert result.output == b"started\n"


def test_a_command_quiet_for_longer_than_an_engine_call_may_take_is_read_to_its_end(backend, running, monkeypatch):
    """The engine client's timeout bounds one API call; it once also cut an exec's output stream,
    so a CLI silent for 15 s (waiting on its runtime) lost its output and its exit."""
    monkeypatch.setattr(docker_engine, "API_TIMEOUT", 1)
    docker_engine._clients.clear()  # a client with the short timeout
    try:
        result = backend.exec(running, ["sh", "-c", "echo first; sleep 2.5; echo last"], timeout=20, max_output=1000)
    finally:
        docker_engine._clients.clear()

    assert (result.exit_code, result.output) == (0, b"first\nlast\n")


def test_stop_when_returns_as_soon_as_the_output_matches(backend, running):
    began = time.monotonic()
    result = backend.exec(running, ["sh", "-c", "echo ready; sleep 30"], timeout=20, max_output=1000,
                          stop_when=lambda output: b"ready" in output)

    assert time.monotonic() - began < 5
    assert result.exit_code is None and not result.timed_out
    assert result.output == b"ready\n"


def test_a_command_left_running_carries_on_after_the_caller_stopped_reading(backend, running):
    # What a QR login relies on: it prints its QR, Fleet stops reading, it waits on for the scan.
    result = backend.exec(running, ["sh", "-c", "echo ready; sleep 1; echo later; touch /tmp/carried-on"],
                          timeout=20, max_output=1000, stop_when=lambda output: b"ready" in output)
    assert result.exit_code is None

    def finished():
        check = backend.exec(running, ["ls", "/tmp/carried-on"], timeout=5, max_output=100)
        return check.exit_code == 0

    deadline = time.monotonic() + 10
    while not finished():
        assert time.monotonic() < deadline, "the command did not finish after its reader went away"
        time.sleep(0.2)


def test_a_program_that_does_not_exist_exits_126_with_the_engines_reason(backend, running):
    result = backend.exec(running, ["no-such-program"], timeout=10, max_output=1000)

    assert result.exit_code == 126
    assert b"no-such-program" in result.output


def test_a_stopped_workload_refuses(backend, running):
    backend.stop(running)
    with pytest.raises(BackendError) as caught:
        backend.exec(running, ["true"], timeout=5, max_output=100)
    assert not isinstance(caught.value, WorkloadMissing)


def test_a_missing_workload_is_workload_missing(backend):
    with pytest.raises(WorkloadMissing):
        backend.exec(FakeAgent(), ["true"], timeout=5, max_output=100)


def test_an_empty_argv_is_refused(backend, running):
    with pytest.raises(BackendError):
        backend.exec(running, [], timeout=5, max_output=100)
