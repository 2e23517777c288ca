"""Handing one event to the hooks that want it (sync: runs in the listener's worker threads).

Hooks are Django code that reads and writes the database, so they never run on the event loop.
One hook's failure is logged with its name and never reaches the connection or the other hooks.
"""

from __future__ import annotations

import logging

from django.db import close_old_connections

from ..hooks import listener_hook
from . import liveness

logger = logging.getLogger(__name__)


def event_deliver(agent_id: str, event: str, payload: dict, hook_names: tuple[str, ...]) -> int:
    """Record the sign of life, then call each named hook that listens for `event` (the link
    chose them; a hook registered again since is looked up afresh). Returns how many hooks ran
    without raising."""
    try:
        liveness.event_seen(agent_id, event)
    except Exception:  # the cache being down must not stop the hooks
        logger.warning("Could not record the listener's last event for agent %s", agent_id, exc_info=True)
    delivered = 0
    for name in hook_names:
        hook = listener_hook(name)
        if hook is None or event not in hook.events:
            continue
        try:
            hook.handler(agent_id, event, payload)
            delivered += 1
        except Exception:
            logger.exception("Listener hook %s failed on %s from agent %s", name, event, agent_id)
    return delivered


def db_job(fn, args):
    """Run `fn(*args)` in a worker thread as Django expects of long-lived processes: drop a
    connection that is past CONN_MAX_AGE or broken before and after the work."""
    close_old_connections()
    try:
        return fn(*args)
    finally:
        close_old_connections()
