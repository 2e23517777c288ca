"""What the sandbox tests share: nemoclaw enabled, sandboxed agents in the tenancy, and the
gateway listener running in a thread (as `manage.py gateway_listener` runs it)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agents.gateway.listener import Backoff, Shard, Supervisor
from tests.factories.agents import WorkspaceAgentFactory

QUICK = Backoff(base=0.2, cap=1.0, refused=0.5, stable=60.0)


@pytest.fixture(autouse=True)
def _nemoclaw_enabled(settings):
    settings.ENABLED_SANDBOX_PROFILES = ["standard", "nemoclaw"]


def sandboxed(tenancy, **fields):
    """A nemoclaw agent of tenancy.agent_owner in tenancy.workspace (stopped, no container)."""
    return tenancy.agent(sandbox_profile="nemoclaw", **fields)


def assign(tenancy, agent):
    WorkspaceAgentFactory(workspace=tenancy.workspace, agent=agent)
    return agent


class ListenerThread:
    """A Supervisor on its own event loop in a thread until the block ends."""

    def __init__(self, supervisor: Supervisor):
        self.supervisor = supervisor
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="test-sandbox-listener")

    def _main(self) -> None:
        try:
            asyncio.run(self.supervisor.run(handle_signals=False))
        except BaseException as exc:
            self._error = exc

    def link(self, agent_id):
        return self.supervisor.links.get(str(agent_id))

    def stop(self) -> None:
        self.supervisor.stop_threadsafe()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "the listener did not stop within 30 s"
        if self._error is not None:
            raise self._error


@pytest.fixture
def running_listener():
    @contextmanager
    def run(*, refresh_seconds: float = 0.3) -> Iterator[ListenerThread]:
        listener = ListenerThread(Supervisor(shard=Shard(), refresh_seconds=refresh_seconds, backoff=QUICK))
        listener._thread.start()
        try:
            yield listener
        finally:
            listener.stop()

    return run
