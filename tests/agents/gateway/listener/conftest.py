"""What the listener's tests share: a clean hook registry."""

from __future__ import annotations

import pytest

from agents.gateway import hooks


@pytest.fixture(autouse=True)
def _own_hook_registry():
    """Each test starts with the hooks the apps registered and leaves them as it found them."""
    saved = dict(hooks._hooks)
    yield
    with hooks._lock:
        hooks._hooks.clear()
        hooks._hooks.update(saved)
