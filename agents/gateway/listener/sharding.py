"""Which listener holds which agent: a stable hash of the agent id, modulo the shard count.

The hash is the first 32 bits of SHA-256 of the id's canonical string, so every process, host
and Python version agrees on it (the built-in hash() is salted per process). Adding a shard
moves agents between listeners; each listener lets go of what it no longer owns within one
refresh and the new owner picks it up within its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings


def shard_of(agent_id, shards: int) -> int:
    """The shard (0 .. shards - 1) that holds `agent_id`."""
    digest = hashlib.sha256(str(agent_id).encode()).hexdigest()
    return int(digest[:8], 16) % shards


@dataclass(frozen=True)
class Shard:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        for name in ("index", "count"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ValueError(f"The listener shard {name} must be a whole number, not {value!r}.")
        if self.count < 1:
            raise ValueError(f"The number of listener shards must be at least 1, not {self.count}.")
        if not 0 <= self.index < self.count:
            raise ValueError(f"The listener shard must be between 0 and {self.count - 1}, not {self.index}.")

    @classmethod
    def from_settings(cls) -> Shard:
        return cls(index=settings.GATEWAY_LISTENER_SHARD, count=settings.GATEWAY_LISTENER_SHARDS)

    def owns(self, agent_id) -> bool:
        return shard_of(agent_id, self.count) == self.index

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"
