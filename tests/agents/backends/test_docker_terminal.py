"""DockerBackend.attach_exec against the real engine, spoken to on the event loop: a shell with a
TTY as the image's user, resizing, its end when it exits, and closing it ending every process
started from it (even one that ignores SIGHUP); a stopped, a missing container and an engine
that does not answer."""

from __future__ import annotations

import asyncio
import time

import pytest

from agents.backends import docker_terminal
from agents.backends.base import BackendUnreachable, WorkloadMissing, WorkloadNotRunning
from agents.backends.docker import DockerBackend
from tests.agents.backends.support import FakeAgent, spec_for
from tests.agents.backends.terminal_support import MARKED_PROCESSES, output_to_end, output_until
from tests.support import wait_until

pytestmark = pytest.mark.usefixtures("docker_settings")


@pytest.fixture
def running(backend):
    agent = FakeAgent()
    return agent.place(backend.create(agent, spec_for(agent)))


def marked(backend, agent) -> list[str]:
    return backend.exec(agent, MARKED_PROCESSES, timeout=10, max_output=10_000).output.split()


def test_the_shell_has_a_tty_and_runs_as_the_images_user(backend, running, docker_engine):
    async def scenario():
        shell = await backend.attach_exec(running, cols=80, rows=24)
        try:
            await shell.write(b'echo "u=$(id -u)= t=$(tty)= term=$TERM="\n')
            return await output_until(shell, rb"u=(\d+)= t=(\S+)= term=(\S+)=")
        finally:
            await shell.close()

    found = asyncio.run(scenario())
    image_user = docker_engine.containers.get(running.container_id).attrs["Config"]["User"] or "0"
    assert found.group(1).decode() == image_user.split(":")[0]
    assert found.group(2).startswith(b"/dev/pts/") and found.group(3) == b"xterm-256color"


def test_the_terminal_takes_its_first_size_and_every_resize(backend, running):
    async def scenario():
        shell = await backend.attach_exec(running, cols=100, rows=30)
        try:
            await shell.write(b'echo "size=$(stty size)="\n')
            first = (await output_until(shell, rb"size=(\d+ \d+)=")).group(1)
            await shell.resize(132, 43)
            await shell.write(b'echo "again=$(stty size)="\n')
            return first, (await output_until(shell, rb"again=(\d+ \d+)=")).group(1)
        finally:
            await shell.close()

    assert asyncio.run(scenario()) == (b"30 100", b"43 132")


def test_exit_ends_the_output(backend, running):
    async def scenario():
        shell = await backend.attach_exec(running, cols=80, rows=24)
        try:
            await shell.write(b"exit\n")
            return await output_to_end(shell)
        finally:
            await shell.close()

    assert b"exit" in asyncio.run(scenario())


def test_closing_ends_the_shell_and_everything_started_from_it(backend, running):
    async def scenario():
        shell = await backend.attach_exec(running, cols=80, rows=24)
        await shell.write(b'sleep 300 & sh -c \'trap "" HUP; sleep 301\' & echo "started=$$="\n')
        await output_until(shell, rb"started=\d+=")
        during = await asyncio.to_thread(marked, backend, running)
        began = time.monotonic()
        await shell.close()
        await shell.close()  # twice is once
        return during, time.monotonic() - began

    during, took = asyncio.run(scenario())
    assert len(during) >= 3  # the shell and both sleeps (one ignores SIGHUP)
    assert took < 3  # the hangup runs detached in the workload: closing does not wait for it
    wait_until(lambda: marked(backend, running) == [], timeout=10)


def test_a_stopped_container_is_not_running_and_a_removed_one_is_missing(backend, running):
    backend.stop(running)
    with pytest.raises(WorkloadNotRunning):
        asyncio.run(backend.attach_exec(running, cols=80, rows=24))
    backend.remove(running)
    with pytest.raises(WorkloadMissing):
        asyncio.run(backend.attach_exec(running, cols=80, rows=24))


def test_an_engine_that_does_not_answer_is_unreachable(dead_socket):
    agent = FakeAgent(container_id="0" * 64)
    with pytest.raises(BackendUnreachable):
        asyncio.run(DockerBackend(host=dead_socket).attach_exec(agent, cols=80, rows=24))


def test_no_thread_is_taken_on_an_engine_on_a_socket(backend, running, monkeypatch):
    """The engine's socket is read on the loop: neither the session nor its start asks for a thread."""
    def no_thread(*args, **kwargs):
        raise AssertionError("a thread was asked for")

    monkeypatch.setattr(asyncio, "to_thread", no_thread)

    async def scenario():
        shell = await backend.attach_exec(running, cols=80, rows=24)
        assert isinstance(shell, docker_terminal.EngineExecSession)
        try:
            await shell.write(b'echo "ok=$((6 * 7))="\n')
            await output_until(shell, rb"ok=42=")
        finally:
            await shell.close()

    asyncio.run(scenario())


def test_a_refused_start_says_the_engines_words(docker_engine_url):
    with pytest.raises(WorkloadMissing, match="No such exec instance"):
        asyncio.run(docker_terminal._start_hijacked(docker_engine_url, "0" * 64))
