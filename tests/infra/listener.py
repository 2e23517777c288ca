"""The gateway listener in a test: a Supervisor on its own event loop in a thread, as the
`gateway_listener` process runs it, with short waits (`QUICK`), and the `running_listener`
fixture that runs one for the length of a `with` block."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agents.gateway.listener import Backoff, Shard, Supervisor

# Tests wait seconds, not minutes: the same loop, with short waits.
QUICK = Backoff(base=0.2, cap=1.0, refused=0.5, stable=60.0)


class ListenerThread:
    """A Supervisor running in a thread of its own until the block ends."""

    def __init__(self, supervisor: Supervisor):
        self.supervisor = supervisor
        self.loop: asyncio.AbstractEventLoop | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._main, daemon=True, name="test-gateway-listener")

    def _main(self) -> None:
        try:
            asyncio.run(self._run())
        except BaseException as exc:  # raised in the test by stop()
            self._error = exc

    async def _run(self) -> None:
        self.loop = asyncio.get_running_loop()
        await self.supervisor.run(handle_signals=False)  # signals belong to the main thread

    def refresh_now(self, timeout: float = 30) -> None:
        """One refresh, on the listener's loop, now (beside its timed ones)."""
        asyncio.run_coroutine_threadsafe(self.supervisor.refresh(), self.loop).result(timeout)

    def link(self, agent_id):
        return self.supervisor.links.get(str(agent_id))

    def start(self) -> ListenerThread:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.supervisor.stop_threadsafe()
        self._thread.join(timeout=30)
        assert not self._thread.is_alive(), "the listener did not stop within 30 s"
        if self._error is not None:
            raise self._error


@pytest.fixture
def running_listener():
    """running_listener(refresh_seconds=0.3, shard=..., backoff=...) as a context manager."""

    @contextmanager
    def run(*, refresh_seconds: float = 0.3, shard: Shard | None = None,
            backoff: Backoff = QUICK) -> Iterator[ListenerThread]:
        listener = ListenerThread(Supervisor(shard=shard or Shard(), refresh_seconds=refresh_seconds, backoff=backoff))
        listener.start()
        try:
            yield listener
        finally:
            listener.stop()

    return run
