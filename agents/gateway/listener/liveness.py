"""The last sign of life the listener saw from each agent's gateway, kept in the cache.

Every frame the listener receives (tick every 30 s, health every 60 s, any event) and every
handshake is a sign of life; it is written at most every RECORD_EVERY_SECONDS per agent, and
with every event a hook takes. It goes to the cache, not to the agents table: at 10,000 agents a
row write per tick would be over 300 UPDATEs a second on the busiest table for a figure that is
only worth anything while it is fresh; a cache entry is one cheap write and expires by itself.
Readers (monitoring, an API) get None for an agent no listener holds or has not heard for
TTL_SECONDS.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from django.core.cache import cache

TTL_SECONDS = 300  # ten ticks: an older sign says nothing about now
RECORD_EVERY_SECONDS = 5.0  # at most one write per agent this often (plus every event a hook takes)
KEY = "gateway-listener:last-event:{}"


def event_seen(agent_id: str, event: str) -> None:
    cache.set(KEY.format(agent_id), {"at": time.time(), "event": event}, TTL_SECONDS)


def last_event(agent_id) -> tuple[datetime, str] | None:
    """(when, which event) the listener last heard from the agent, or None."""
    seen = cache.get(KEY.format(agent_id))
    if not isinstance(seen, dict):
        return None
    return datetime.fromtimestamp(seen["at"], tz=UTC), str(seen["event"])
