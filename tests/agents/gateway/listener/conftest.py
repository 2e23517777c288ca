"""What the listener's tests share: a clean hook registry, recorded hook calls, and the listener
in a thread (tests/infra/listener.py)."""

from __future__ import annotations

import threading

import pytest

from agents.gateway import hooks
from tests.infra.listener import running_listener  # noqa: F401 (fixture for this folder)


@pytest.fixture(autouse=True)
def _own_hook_registry():
    """Each test starts with the hooks the apps registered and leaves them as it found them."""
    saved = dict(hooks._hooks)
    yield
    with hooks._lock:
        hooks._hooks.clear()
        hooks._hooks.update(saved)


class Calls:
    """A hook handler that records (agent_id, event, payload), safe across threads."""

    def __init__(self):
        self._calls: list[tuple[str, str, dict]] = []
        self._lock = threading.Lock()

    def __call__(self, agent_id: str, event: str, payload: dict) -> None:
        with self._lock:
            self._calls.append((agent_id, event, payload))

    def of(self, event: str, agent_id=None) -> list[dict]:
        with self._lock:
            return [p for a, e, p in self._calls if e == event and (agent_id is None or a == str(agent_id))]

    def events(self, agent_id=None) -> list[str]:
        with self._lock:
            return [e for a, e, _ in self._calls if agent_id is None or a == str(agent_id)]


@pytest.fixture
def calls() -> Calls:
    return Calls()
